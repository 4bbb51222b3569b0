"""Test doubles that are real implementations of the model interfaces.

``ScriptedChatModel`` is a LangChain chat model that answers from a script and
records what it was asked. ``HashEmbeddings`` is deterministic LangChain
embeddings without a server; ``TimingOutEmbeddings`` is the same behind a server too
slow for large batches (it raises the openai SDK's timeout). ``StubOpenAIServer``
speaks the OpenAI HTTP wire format on loopback, so the real
``ChatOpenAI``/``OpenAIEmbeddings`` client path (serialisation, retries, tool-call
parsing) runs in tests.

A structured reply (a Pydantic instance or a dict) comes back as a tool call to
the function the caller asked for, so LangChain's own parser validates it: a
dict that does not fit the schema produces a real validation error.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import math
import struct
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any, Self

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage, get_buffer_string
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import BaseModel, Field, PrivateAttr

if TYPE_CHECKING:  # the openai SDK's HTTP client, imported where a timeout is made
    import httpx2

ScriptedReply = str | AIMessage | BaseModel | dict[str, Any]
"""Text, a message as is (e.g. with tool_calls), or a structured object."""


class ScriptExhaustedError(AssertionError):
    """A test double was called more often than its script allows."""


class ScriptedChatModel(BaseChatModel):
    """A chat model that returns queued replies in order and records every call.

    Replies: a ``str`` (text), an ``AIMessage`` (returned as is, e.g. with
    ``tool_calls``), or a Pydantic instance / dict (a structured reply: a tool
    call to the bound function, or JSON text when no tools are bound).

    Concurrency is counted, not timed: ``peak_in_flight`` is the most calls inside the
    model at once, and ``wait_for_concurrent=n`` holds calls until ``n`` are inside
    together, so "these ran in parallel" is ``peak_in_flight == n``.

    Example:
        >>> model = ScriptedChatModel(["hello", {"total": 3}])
        >>> model.invoke("hi").content
        'hello'
        >>> model.with_structured_output(Answer).invoke("sum?")
        Answer(total=3)
    """

    replies: list[Any] = Field(default_factory=list)
    respond: Callable[[list[BaseMessage], list[str]], ScriptedReply] | None = None
    """Replies by what a call asks (its messages, the names of its bound tools) instead of
    from ``replies`` in order: for callers whose call order is not fixed (parallel work)."""
    delay_s: float = 0.0
    """Seconds each call sleeps (outside the lock, so concurrent calls overlap)."""
    wait_for_concurrent: int = 0
    """When above 1, a call waits inside the model until this many calls have been inside
    it at once (``peak_in_flight``), so a test proves parallel calls by counting: callers
    that overlap reach the number; a caller that serialises its calls never does — the
    first call gives up after ``wait_timeout_s`` and later calls no longer wait."""
    wait_timeout_s: float = 5.0
    wait_if: Callable[[list[BaseMessage], list[str]], bool] | None = None
    """Which calls wait (by their messages and bound tool names; default: every call), so
    a serial call before the parallel part (e.g. a plan) does not give up the wait."""

    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)
    _entered: threading.Condition = PrivateAttr(default_factory=threading.Condition)
    _in_flight: int = PrivateAttr(default=0)
    _peak: int = PrivateAttr(default=0)
    _gave_up: bool = PrivateAttr(default=False)
    _position: int = PrivateAttr(default=0)
    _calls: list[list[BaseMessage]] = PrivateAttr(default_factory=list)
    _tools: list[list[str]] = PrivateAttr(default_factory=list)

    def __init__(self, replies: Sequence[ScriptedReply] = (), **kwargs: Any) -> None:
        super().__init__(**{"replies": list(replies), **kwargs})

    @property
    def _llm_type(self) -> str:
        return "scripted"

    @property
    def calls(self) -> list[list[BaseMessage]]:
        """The input messages of every call, in order."""
        with self._lock:
            return [list(messages) for messages in self._calls]

    @property
    def prompts(self) -> list[str]:
        """Every call's messages rendered as text ("System: ...\\nHuman: ...")."""
        return [get_buffer_string(messages) for messages in self.calls]

    @property
    def tool_names(self) -> list[list[str]]:
        """The names of the tools bound for every call (empty when none)."""
        with self._lock:
            return [list(names) for names in self._tools]

    @property
    def remaining(self) -> int:
        """Replies not consumed yet."""
        with self._lock:
            return len(self.replies) - self._position

    @property
    def peak_in_flight(self) -> int:
        """The most calls that were inside the model at the same time (sync and async)."""
        with self._entered:
            return self._peak

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Any],
        *,
        tool_choice: str | dict[str, Any] | bool | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """Bind tools the way ChatOpenAI does (OpenAI tool dicts in ``tools``)."""
        formatted = [convert_to_openai_tool(tool) for tool in tools]
        return self.bind(tools=formatted, tool_choice=tool_choice, **kwargs)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self._enter()
        try:
            reply, number, waits = self._take(messages, kwargs)
            with self._entered:
                if waits:
                    self._entered.wait_for(self._may_go, timeout=self.wait_timeout_s)
                    self._give_up_waiting()
            if self.delay_s > 0:
                time.sleep(self.delay_s)
            return self._result(reply, number, kwargs)
        finally:
            self._leave()

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self._enter()
        try:
            reply, number, waits = self._take(messages, kwargs)
            deadline = time.monotonic() + self.wait_timeout_s
            while waits and not self._may_go() and time.monotonic() < deadline:
                await asyncio.sleep(0.005)  # other coroutines of the loop enter meanwhile
            if waits:
                with self._entered:
                    self._give_up_waiting()
            if self.delay_s > 0:
                await asyncio.sleep(self.delay_s)
            return self._result(reply, number, kwargs)
        finally:
            self._leave()

    def _enter(self) -> None:
        with self._entered:
            self._in_flight += 1
            self._peak = max(self._peak, self._in_flight)
            self._entered.notify_all()

    def _leave(self) -> None:
        with self._entered:
            self._in_flight -= 1

    def _may_go(self) -> bool:
        """True once ``wait_for_concurrent`` calls were inside at once (or waiting gave up)."""
        return self._gave_up or self._peak >= self.wait_for_concurrent

    def _give_up_waiting(self) -> None:
        """After one timed-out wait, later calls do not wait (a serial caller pays once)."""
        if not self._may_go():
            self._gave_up = True
            self._entered.notify_all()

    def _take(self, messages: list[BaseMessage], kwargs: dict[str, Any]) -> tuple[Any, int, bool]:
        """The reply of this call, its 1-based number, and whether it waits for company."""
        with self._lock:
            self._calls.append(list(messages))
            tool_names = _tool_names(kwargs.get("tools"))
            self._tools.append(tool_names)
            number = len(self._calls)
            waits = self.wait_for_concurrent > 1 and (
                self.wait_if is None or self.wait_if(list(messages), tool_names)
            )
            if self.respond is not None:
                return self.respond(list(messages), tool_names), number, waits
            if self._position >= len(self.replies):
                raise ScriptExhaustedError(
                    f"ScriptedChatModel got call #{number} but only {len(self.replies)} "
                    f"repl{'y was' if len(self.replies) == 1 else 'ies were'} scripted; "
                    f"last input:\n{get_buffer_string(messages)[-500:]}"
                )
            reply = self.replies[self._position]
            self._position += 1
        return reply, number, waits

    def _result(self, reply: Any, number: int, kwargs: dict[str, Any]) -> ChatResult:
        if isinstance(reply, AIMessage):
            message = reply.model_copy(deep=True)
        elif isinstance(reply, str):
            message = AIMessage(content=reply)
        elif isinstance(reply, BaseModel | dict):
            message = _structured_message(reply, number, kwargs)
        else:
            raise TypeError(
                f"ScriptedChatModel reply #{number} is a {type(reply).__name__}; "
                "script str, AIMessage, a Pydantic instance or a dict"
            )
        return ChatResult(generations=[ChatGeneration(message=message)])


def _tool_names(tools: Any) -> list[str]:
    names = []
    for tool in tools or []:
        function = tool.get("function", tool) if isinstance(tool, dict) else {}
        if isinstance(function, dict) and function.get("name"):
            names.append(str(function["name"]))
    return names


def _chosen_function(tool_choice: Any) -> str | None:
    """The function name a tool_choice forces, if it names one."""
    if isinstance(tool_choice, dict):
        function = tool_choice.get("function") or {}
        return function.get("name") or tool_choice.get("name")
    if isinstance(tool_choice, str) and tool_choice not in {"auto", "any", "required", "none"}:
        return tool_choice
    return None


def _target_function(reply: BaseModel | dict[str, Any], names: list[str], choice: Any) -> str:
    """Which bound function a structured reply answers (shared with the stub server)."""
    forced = _chosen_function(choice)
    if forced:
        return forced
    if isinstance(reply, BaseModel):
        title = type(reply).model_config.get("title") or type(reply).__name__
        if title in names:
            return title
    if len(names) == 1:
        return names[0]
    raise ValueError(
        f"a structured reply is ambiguous with tools {names}; script an AIMessage with "
        "tool_calls (or StubToolCall) naming the function"
    )


def _arguments(reply: BaseModel | dict[str, Any]) -> dict[str, Any]:
    return reply.model_dump(mode="json") if isinstance(reply, BaseModel) else dict(reply)


def _structured_message(
    reply: BaseModel | dict[str, Any], number: int, kwargs: dict[str, Any]
) -> AIMessage:
    names = _tool_names(kwargs.get("tools"))
    if not names:
        return AIMessage(content=json.dumps(_arguments(reply), ensure_ascii=False))
    name = _target_function(reply, names, kwargs.get("tool_choice"))
    call = {"name": name, "args": _arguments(reply), "id": f"call_{number}", "type": "tool_call"}
    return AIMessage(content="", tool_calls=[call])


# --------------------------------------------------------------------------- stub server


@dataclass(frozen=True)
class StubToolCall:
    """A tool call the stub server answers with (``arguments`` may be raw JSON text)."""

    name: str
    arguments: dict[str, Any] | str = field(default_factory=dict)
    id: str | None = None


@dataclass(frozen=True)
class StubError:
    """An HTTP error the stub server answers with (e.g. 429, 500) instead of a reply."""

    status: int = 500
    message: str = "stub server error"
    """``ECHO_KEY`` in it is replaced by the request's API key (the provider's echo)."""
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class StubRawReply:
    """A reply the stub server sends as is: any status, body and content type.

    For malformed replies of a faulty endpoint or proxy: an HTML page with status
    200, JSON without ``choices``, or JSON cut off midway.
    """

    body: str
    status: int = 200
    content_type: str = "application/json"


@dataclass(frozen=True)
class RecordedRequest:
    """One request the stub server received (header names lower-cased)."""

    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


StubReply = (
    str | StubToolCall | list[StubToolCall] | BaseModel | dict[str, Any] | StubError | StubRawReply
)

ECHO_KEY = "{api_key}"
"""Written in a ``StubError`` message, replaced by the API key of the request, like a
provider's 401 "Incorrect API key provided: sk-..."."""


def stub_embedding(text: str, dim: int = 64) -> list[float]:
    """The stub server's vector for ``text``: hashed character bigrams, unit length.

    Deterministic, and texts sharing words get similar vectors, so vector search
    behaves sensibly in tests.
    """
    vector = [0.0] * dim
    padded = f" {text} "
    for index in range(len(padded) - 1):
        digest = hashlib.blake2b(padded[index : index + 2].encode(), digest_size=8).digest()
        bucket = int.from_bytes(digest[:4], "little") % dim
        vector[bucket] += 1.0 if digest[4] % 2 else -1.0
    norm = math.sqrt(sum(value * value for value in vector)) or 1.0
    return [value / norm for value in vector]


class HashEmbeddings(Embeddings):
    """Deterministic LangChain embeddings: ``stub_embedding`` vectors, no network.

    The same text always gets the same unit vector (hashed character bigrams), so
    a query equal to an indexed text scores 1.0; only exact or near-exact text
    similarity is meaningful. Records every call: ``document_batches`` (one list
    of texts per ``embed_documents`` call) and ``queries``.
    """

    def __init__(self, dim: int = 64) -> None:
        self.dim = dim
        self.document_batches: list[list[str]] = []
        self.queries: list[str] = []
        self._lock = threading.Lock()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        with self._lock:
            self.document_batches.append(list(texts))
        return [stub_embedding(text, self.dim) for text in texts]

    def embed_query(self, text: str) -> list[float]:
        with self._lock:
            self.queries.append(text)
        return stub_embedding(text, self.dim)


def sdk_timeout(cause: type[httpx2.TimeoutException] | None = None) -> Exception:
    """What the openai SDK raises when a request times out (after its retries):
    ``openai.APITimeoutError`` caused by the HTTP client's ``ReadTimeout`` (or ``cause``,
    e.g. ``httpx2.ConnectTimeout``)."""
    import httpx2
    import openai

    request = httpx2.Request("POST", "http://127.0.0.1/v1/embeddings")
    error = openai.APITimeoutError(request=request)
    error.__cause__ = (cause or httpx2.ReadTimeout)("timed out", request=request)
    return error


class TimingOutEmbeddings(HashEmbeddings):
    """``HashEmbeddings`` behind a server too slow for more than ``most`` texts at once.

    ``embed_documents`` of more than ``most`` texts raises :func:`sdk_timeout` (``most=0``:
    every call times out). ``sizes`` records the number of texts of every call, answered
    or not.
    """

    def __init__(self, most: int, dim: int = 64) -> None:
        super().__init__(dim)
        self.most = most
        self.sizes: list[int] = []

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        with self._lock:
            self.sizes.append(len(texts))
        if len(texts) > self.most:
            raise sdk_timeout()
        return super().embed_documents(texts)


class LoopbackServer:
    """An HTTP server on a free 127.0.0.1 port, served from a background thread.

    The test stubs (the OpenAI server here, the search APIs of the research agent) use it
    for start/stop; ``handler`` is their request handler class.
    """

    def __init__(self, handler: type[BaseHTTPRequestHandler]) -> None:
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        self._httpd.block_on_close = False
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()

    @property
    def origin(self) -> str:
        """``http://127.0.0.1:PORT``."""
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def stop(self) -> None:
        """Stop serving, close the socket and wait for the thread."""
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)


class StubOpenAIServer:
    """An OpenAI-compatible HTTP server on 127.0.0.1 serving scripted replies.

    Serves ``POST /v1/chat/completions`` (JSON or SSE when ``stream`` is true)
    from the reply queue, and ``POST /v1/embeddings`` with ``stub_embedding``
    vectors. Paths are matched by their ending, so Azure-style
    ``/openai/deployments/<name>/chat/completions`` works too.

    Replies: a ``str`` (text), a ``StubToolCall`` or a list of them, a Pydantic
    instance / dict (a tool call to the requested function when the request has
    tools, else JSON text), a ``StubError`` (an HTTP error, e.g. 429 or 500; ``ECHO_KEY``
    in its message echoes the request's key) or a ``StubRawReply`` (any body as is).
    Requests are recorded in ``requests``.

    Example:
        >>> with StubOpenAIServer(["hello"]) as server:
        ...     ChatOpenAI(base_url=server.base_url, api_key="x").invoke("hi").content
        'hello'
    """

    def __init__(self, replies: Sequence[StubReply] = (), *, embedding_dim: int = 64) -> None:
        self.embedding_dim = embedding_dim
        self._replies: list[StubReply] = list(replies)
        self._position = 0
        self._requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._server: LoopbackServer | None = None

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def start(self) -> None:
        """Listen on a free loopback port and serve in a background thread."""
        self._server = LoopbackServer(type("Handler", (_Handler,), {"stub": self}))

    def stop(self) -> None:
        """Stop serving and close the socket."""
        if self._server is not None:
            self._server.stop()
        self._server = None

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``, for ``base_url``/``openai_api_base``."""
        return f"{self.origin}/v1"

    @property
    def origin(self) -> str:
        """``http://127.0.0.1:PORT`` (e.g. an Azure endpoint)."""
        if self._server is None:
            raise RuntimeError("StubOpenAIServer is not running; use it as a context manager")
        return self._server.origin

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received, in order."""
        with self._lock:
            return list(self._requests)

    @property
    def chat_requests(self) -> list[RecordedRequest]:
        """The chat-completions requests only."""
        return [
            request
            for request in self.requests
            if request.path.split("?", 1)[0].endswith("/chat/completions")
        ]

    @property
    def remaining(self) -> int:
        """Chat replies not served yet."""
        with self._lock:
            return len(self._replies) - self._position

    def add_replies(self, *replies: StubReply) -> None:
        """Append replies to the queue."""
        with self._lock:
            self._replies.extend(replies)

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(request)

    def _next_reply(self) -> tuple[StubReply | None, int]:
        """The next reply (None when the script is exhausted) and its 1-based number."""
        with self._lock:
            if self._position >= len(self._replies):
                return None, self._position + 1
            reply = self._replies[self._position]
            self._position += 1
            return reply, self._position


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    stub: StubOpenAIServer

    def log_message(self, format: str, *args: Any) -> None:
        """Silence the default stderr access log."""

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        body = json.loads(raw) if raw else {}
        path = self.path.split("?", 1)[0]
        self.stub._record(
            RecordedRequest(
                "POST", self.path, {k.lower(): v for k, v in self.headers.items()}, body
            )
        )
        if path.endswith("/chat/completions"):
            self._chat(body)
        elif path.endswith("/embeddings"):
            self._embeddings(body)
        else:
            self._error(404, f"StubOpenAIServer does not serve {path}")

    def _chat(self, body: dict[str, Any]) -> None:
        reply, number = self.stub._next_reply()
        if reply is None:
            total = len(self.stub._replies)
            self._error(400, f"StubOpenAIServer has no reply left: {total} were scripted")
            return
        if isinstance(reply, StubError):
            self._error(reply.status, self._echo_key(reply.message), reply.headers)
            return
        if isinstance(reply, StubRawReply):
            self._raw(reply)
            return
        try:
            message = _assistant_message(reply, body, number)
        except ValueError as exc:
            self._error(400, f"StubOpenAIServer: {exc}")
            return
        finish = "tool_calls" if message.get("tool_calls") else "stop"
        usage = {"prompt_tokens": len(json.dumps(body.get("messages", []))) // 4 + 1}
        usage["completion_tokens"] = len(json.dumps(message)) // 4 + 1
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        base = {"id": f"chatcmpl-stub-{number}", "created": int(time.time())}
        base["model"] = body.get("model", "stub-model")
        if body.get("stream"):
            self._stream(base, message, finish, usage, body)
            return
        choice = {"index": 0, "message": message, "finish_reason": finish, "logprobs": None}
        self._json(200, {**base, "object": "chat.completion", "choices": [choice], "usage": usage})

    def _stream(
        self,
        base: dict[str, Any],
        message: dict[str, Any],
        finish: str,
        usage: dict[str, int],
        body: dict[str, Any],
    ) -> None:
        deltas: list[dict[str, Any]] = [{"role": "assistant", "content": ""}]
        text = message.get("content") or ""
        step = max(1, len(text) // 3)
        deltas += [{"content": text[i : i + step]} for i in range(0, len(text), step)]
        for index, call in enumerate(message.get("tool_calls") or []):
            head = {"index": index, "id": call["id"], "type": "function"}
            head["function"] = {"name": call["function"]["name"], "arguments": ""}
            deltas.append({"tool_calls": [head]})
            arguments = {"index": index, "function": {"arguments": call["function"]["arguments"]}}
            deltas.append({"tool_calls": [arguments]})
        chunks = [
            {**base, "object": "chat.completion.chunk", "choices": [choice]}
            for choice in [{"index": 0, "delta": delta, "finish_reason": None} for delta in deltas]
            + [{"index": 0, "delta": {}, "finish_reason": finish}]
        ]
        if (body.get("stream_options") or {}).get("include_usage"):
            chunks.append(
                {**base, "object": "chat.completion.chunk", "choices": [], "usage": usage}
            )
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        for chunk in chunks:
            self.wfile.write(f"data: {json.dumps(chunk, ensure_ascii=False)}\n\n".encode())
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()
        self.close_connection = True

    def _embeddings(self, body: dict[str, Any]) -> None:
        inputs = body.get("input", [])
        if isinstance(inputs, str) or (inputs and isinstance(inputs[0], int)):
            inputs = [inputs]
        data = []
        for index, item in enumerate(inputs):
            text = item if isinstance(item, str) else " ".join(str(token) for token in item)
            vector = stub_embedding(text, self.stub.embedding_dim)
            embedding: Any = vector
            if body.get("encoding_format") == "base64":
                packed = struct.pack(f"<{len(vector)}f", *vector)
                embedding = base64.b64encode(packed).decode()
            data.append({"object": "embedding", "index": index, "embedding": embedding})
        tokens = sum(len(str(item)) for item in inputs) // 4 + 1
        usage = {"prompt_tokens": tokens, "total_tokens": tokens}
        response = {"object": "list", "data": data, "model": body.get("model"), "usage": usage}
        self._json(200, response)

    def _json(
        self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None
    ) -> None:
        data = json.dumps(payload, ensure_ascii=False).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _echo_key(self, message: str) -> str:
        authorization = self.headers.get("Authorization") or ""
        key = authorization.removeprefix("Bearer ") or self.headers.get("api-key") or ""
        return message.replace(ECHO_KEY, key)

    def _raw(self, reply: StubRawReply) -> None:
        data = reply.body.encode()
        self.send_response(reply.status)
        self.send_header("Content-Type", reply.content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _error(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        error = {"message": message, "type": "stub_error", "param": None, "code": str(status)}
        self._json(status, {"error": error}, headers)


def _assistant_message(reply: StubReply, body: dict[str, Any], number: int) -> dict[str, Any]:
    """The ``choices[0].message`` for a scripted reply."""
    if isinstance(reply, str):
        return {"role": "assistant", "content": reply}
    calls: list[StubToolCall]
    if isinstance(reply, StubToolCall):
        calls = [reply]
    elif isinstance(reply, list):
        calls = reply
    elif isinstance(reply, StubError | StubRawReply):
        raise ValueError("a StubError or StubRawReply is answered as is, not as a message")
    else:
        names = _tool_names(body.get("tools"))
        if not names:
            return {
                "role": "assistant",
                "content": json.dumps(_arguments(reply), ensure_ascii=False),
            }
        name = _target_function(reply, names, body.get("tool_choice"))
        calls = [StubToolCall(name, _arguments(reply))]
    tool_calls = []
    for index, call in enumerate(calls):
        arguments = call.arguments
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments, ensure_ascii=False)
        function = {"name": call.name, "arguments": arguments}
        tool_calls.append(
            {"id": call.id or f"call_{number}_{index}", "type": "function", "function": function}
        )
    return {"role": "assistant", "content": None, "tool_calls": tool_calls}
