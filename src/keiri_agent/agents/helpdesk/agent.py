"""``HelpDeskAgent``: plan → parallel subtasks (search, answer, reflect) → final answer.

The graph is seed 001's, method by method::

    main graph:  START → create_plan ─(one Send per subtask)→ execute_subtasks → create_answer → END
    subgraph:    START → select_tools → execute_tools → create_subtask_answer → reflect_subtask
                            ↑                                                         │
                            └──────── "continue" (not completed and attempts < cap) ──┘
                                      "end" → END

Differences from the public reference implementation (ARCHITECTURE §7):

* The chat model comes from ``keiri_agent.llm.chat_model(settings)``, which
  honours ``settings.openai_api_base``.
* A tool-selection reply without a tool call is a failed attempt with advice
  (「検索ツールを必ず呼び出してください…」), retried up to the cap; its text, if
  any, is kept only as an answer marked as not grounded in sources.
* On a retry the history sent to ``select_tools`` really loses the earlier
  tool calls and tool results (seed §12.2): only system/human messages, the
  previous subtask answers and the reflections remain.
* Passages are numbered with their citation; in a subtask answer ``[i]`` refers
  to ``Subtask.sources[i-1]``; the final answer renumbers them over all
  subtasks, ends with a 出典 section and says plainly what was not found.
* Subtasks run in parallel threads (a superstep's ``Send`` tasks), at most
  ``max_parallel_subtasks`` at a time.

Events: ``run_agent(question, on_event=...)`` calls ``on_event(event)`` with a
dict whose ``type`` is ``plan``, ``tool_results``, ``subtask_answer``,
``reflection``, ``subtask_done`` or ``answer``. Subtask events are called
**from worker threads**, several at once: a handler must be thread-safe
(e.g. put the events on a ``queue.Queue`` and render them from the UI thread).

Offline mode (provider ``offline`` and no injected chat model): every decision
is made by :mod:`keiri_agent.agents.helpdesk.offline` instead of the model, and
``AgentResult.offline`` is True.
"""

from __future__ import annotations

import json
import logging
import re
import unicodedata
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import openai
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.runnables import Runnable
from langgraph.config import get_config
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Send

from keiri_agent.agents.helpdesk import offline as offline_rules
from keiri_agent.agents.helpdesk.models import (
    AgentResult,
    Plan,
    ReflectionResult,
    SearchOutput,
    Subtask,
    ToolResult,
)
from keiri_agent.agents.helpdesk.prompts import HelpDeskAgentPrompts
from keiri_agent.agents.helpdesk.state import AgentState, AgentSubGraphState
from keiri_agent.agents.helpdesk.tools import SearchTool, tool_map
from keiri_agent.config import Settings
from keiri_agent.errors import ConfigurationError, LLMError, UserInputError
from keiri_agent.llm.factory import chat_model as make_chat_model
from keiri_agent.llm.structured import invoke_structured, to_llm_error

logger = logging.getLogger("keiri_agent.helpdesk")

MAX_CHALLENGE_COUNT = 3
"""Attempts per subtask before it ends as not completed (seed §6.2)."""

NO_TOOL_CALL_ADVICE = (
    "検索ツールを必ず呼び出してください。文章で回答するのではなく、用意された検索ツールのいずれかを、"
    "具体的な検索語を引数 query に指定して呼び出してください。"
)

UNGROUNDED_LABEL = "参考（検索結果に基づかないモデルの回答のため、正確さは保証されません）"

EVENT_HANDLER_KEY = "helpdesk_on_event"
"""Where ``run_agent`` puts the event handler in the run config's ``configurable``."""

EventHandler = Callable[[dict[str, Any]], None]

_NUMBER = r"[0-9０-９]+"
_CITATION = re.compile(rf"[\[［]({_NUMBER}(?:\s*(?:[,、，]|[-‐–~〜～])\s*{_NUMBER})*)[\]］]")
"""``[1]``, ``[1, 2]``, ``[1-3]``, and the full-width ``［１］`` models write in Japanese."""
_MAX_RANGE = 20
_SOURCES_HEADING = re.compile(r"^\s*(?:#{1,6}\s*)?[【\[]?出典[】\]]?\s*[:：]?\s*$", re.MULTILINE)
_NOT_FOUND_HEADING = "見つからなかった点"


# --------------------------------------------------------------------------- citations


@dataclass(frozen=True)
class NumberedSource:
    """One citation of an attempt's search results and the passages that share it."""

    number: int
    citation: str
    passages: tuple[SearchOutput, ...]


def number_sources(results: Sequence[ToolResult]) -> list[NumberedSource]:
    """Number the distinct citations of one attempt's results, in order of appearance."""
    order: list[str] = []
    passages: dict[str, list[SearchOutput]] = {}
    for result in results:
        for output in result.results:
            citation = output.citation()
            if citation not in passages:
                order.append(citation)
                passages[citation] = []
            if all(output.content != known.content for known in passages[citation]):
                passages[citation].append(output)
    return [
        NumberedSource(index, citation, tuple(passages[citation]))
        for index, citation in enumerate(order, start=1)
    ]


def _marker_numbers(inside: str) -> list[int]:
    """The numbers of one marker's inside: ``"1, 3"`` → [1, 3]; ``"２〜４"`` → [2, 3, 4]."""
    numbers: list[int] = []
    for part in re.split(r"[,、，]", unicodedata.normalize("NFKC", inside)):
        ends = [int(end) for end in re.split(r"[-‐–~〜～]", part.strip()) if end.strip()]
        if len(ends) == 2 and 0 <= ends[1] - ends[0] < _MAX_RANGE:
            numbers.extend(range(ends[0], ends[1] + 1))
        else:
            numbers.extend(ends)
    return numbers


def cited_numbers(text: str) -> list[int]:
    """The numbers of the markers ``[1]``, ``[2, 3]``, ``[4-5]``, ``［６］`` in ``text``."""
    numbers: list[int] = []
    for match in _CITATION.finditer(text):
        for number in _marker_numbers(match.group(1)):
            if number not in numbers:
                numbers.append(number)
    return numbers


def renumber_citations(text: str, mapping: dict[int, int]) -> str:
    """Rewrite ``[n]`` markers (any form above) through ``mapping`` as ``[m]``; markers not
    in it are removed."""

    def replace(match: re.Match[str]) -> str:
        parts = _marker_numbers(match.group(1))
        kept = [mapping[part] for part in parts if part in mapping]
        return "".join(f"[{number}]" for number in dict.fromkeys(kept))

    return _CITATION.sub(replace, text)


def collect_sources(subtasks: Sequence[Subtask]) -> list[str]:
    """Every subtask's sources, distinct, in plan order then first use."""
    return list(dict.fromkeys(source for subtask in subtasks for source in subtask.sources))


def unanswered_subtasks(subtasks: Sequence[Subtask]) -> list[str]:
    """The subtasks that ended without a complete answer."""
    return [subtask.task_name for subtask in subtasks if not subtask.is_completed]


def drop_tool_messages(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    """The history without tool calls and tool results (seed §12.2 token saving).

    Removes every ``ToolMessage`` and every ``AIMessage`` that carries tool calls
    (valid or malformed); keeps system and human messages and the model's text
    replies (previous subtask answers and reflections).
    """
    kept: list[BaseMessage] = []
    for message in messages:
        if isinstance(message, ToolMessage):
            continue
        if isinstance(message, AIMessage) and (message.tool_calls or message.invalid_tool_calls):
            continue
        kept.append(message)
    return kept


def ensure_answer_sections(text: str, sources: Sequence[str], unanswered: Sequence[str]) -> str:
    """Append 「見つからなかった点」 (when needed and missing) and a 出典 section."""
    text = text.rstrip()
    if unanswered and _NOT_FOUND_HEADING not in text:
        lines = [
            f"- 「{name}」について、資料から十分な回答が見つかりませんでした。"
            for name in unanswered
        ]
        text += f"\n\n## {_NOT_FOUND_HEADING}\n" + "\n".join(lines)
    if not _SOURCES_HEADING.search(text):
        if sources:
            listed = "\n".join(f"[{index}] {source}" for index, source in enumerate(sources, 1))
        else:
            listed = "（検索結果から引用できる出典はありませんでした）"
        text += "\n\n## 出典\n" + listed
    return text


def _format_tool_result(result: ToolResult, numbers: dict[str, int], note: str | None) -> str:
    lines = []
    if note:
        lines.append(f"注意: {note}")
    if not result.results:
        lines.append("該当する資料は見つかりませんでした。")
    seen: set[tuple[str, str]] = set()
    for output in result.results:
        citation = output.citation()
        if (citation, output.content) in seen:
            continue
        seen.add((citation, output.content))
        lines.append(f"[{numbers[citation]}] {citation}\n{output.content.strip()}")
    return "\n\n".join(lines)


def _text(message: BaseMessage) -> str:
    return message.text.strip()


def _attempt_results(state: AgentSubGraphState) -> list[ToolResult]:
    attempts = list(state.get("tool_results") or [])
    return list(attempts[-1]) if attempts else []


def _searched_before(state: AgentSubGraphState) -> bool:
    """True when an attempt before the current one called a tool."""
    return any(attempt for attempt in list(state.get("tool_results") or [])[:-1])


def _last_advice(state: AgentSubGraphState) -> str:
    reflections = list(state.get("reflection_results") or [])
    return reflections[-1].advice if reflections else ""


# --------------------------------------------------------------------------- the agent


class HelpDeskAgent:
    """The HelpDesk agent of seed 001 (plan, parallel subtasks, reflection, answer).

    Args:
        settings: Provider, model and structured-output settings (default: from env).
        tools: The search tools the model may call (see ``tools.default_tools``).
        prompts: Prompt texts (default: ``HelpDeskAgentPrompts()``).
        chat_model: A chat model to use instead of the configured one (tests).
        max_challenge_count: Attempts per subtask (seed: 3).
        max_parallel_subtasks: Subtasks run at the same time.

    Raises:
        ConfigurationError: No tools, duplicate tool names, bad limits, or an
            incompletely configured provider.
    """

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        tools: Sequence[SearchTool],
        prompts: HelpDeskAgentPrompts | None = None,
        chat_model: BaseChatModel | None = None,
        max_challenge_count: int = MAX_CHALLENGE_COUNT,
        max_parallel_subtasks: int = 8,
    ) -> None:
        if not tools:
            raise ConfigurationError(
                "HelpDeskAgent needs at least one search tool",
                hint="pass tools=default_tools(manual_searcher, qa_searcher)",
            )
        if max_challenge_count < 1 or max_parallel_subtasks < 1:
            raise ConfigurationError(
                f"max_challenge_count ({max_challenge_count}) and max_parallel_subtasks "
                f"({max_parallel_subtasks}) must be at least 1",
                hint="use the defaults 3 and 8",
            )
        self.settings = settings or Settings()
        self.tools = list(tools)
        self.tool_map = tool_map(self.tools)
        self.prompts = prompts or HelpDeskAgentPrompts()
        self.max_challenge_count = max_challenge_count
        self.max_parallel_subtasks = max_parallel_subtasks
        if chat_model is None and not self.settings.is_offline:
            chat_model = make_chat_model(self.settings)
        self.chat_model = chat_model
        self.offline = chat_model is None
        self._tool_model: Runnable[Any, BaseMessage] | None = (
            chat_model.bind_tools([tool.openai_schema() for tool in self.tools])
            if chat_model is not None
            else None
        )
        self._subgraph: CompiledStateGraph[Any, Any, Any, Any] | None = None
        self._graph: CompiledStateGraph[Any, Any, Any, Any] | None = None

    # ------------------------------------------------------------------ main graph nodes
    def create_plan(self, state: AgentState) -> dict[str, Any]:
        """Split the question into subtasks (seed §4.1) → ``{"plan": [...]}``."""
        question = (state.get("question") or "").strip()
        if not question:
            raise UserInputError("the question is empty", hint="ask a question about the system")
        with _logged("create_plan"):
            if self.offline:
                subtasks = offline_rules.split_question(question)
            else:
                messages = [
                    SystemMessage(self.prompts.render("planner_system_prompt")),
                    HumanMessage(self.prompts.render("planner_user_prompt", question=question)),
                ]
                plan = self._structured(Plan, messages)
                subtasks = plan.subtasks
            cleaned = list(dict.fromkeys(item.strip() for item in subtasks if item.strip()))
            if not cleaned:
                logger.warning("create_plan: the plan was empty; using the question as the task")
                cleaned = [question]
            logger.debug("create_plan: %d subtask(s): %s", len(cleaned), cleaned)
            self._emit({"type": "plan", "subtasks": cleaned, "offline": self.offline})
        return {"plan": cleaned}

    def create_answer(self, state: AgentState) -> dict[str, Any]:
        """Combine the subtask answers into the final answer (seed §4.6)."""
        plan = list(state.get("plan") or [])
        subtasks = _in_plan_order(state.get("subtask_results") or [], plan)
        sources = collect_sources(subtasks)
        unanswered = unanswered_subtasks(subtasks)
        with _logged("create_answer"):
            if self.offline:
                text = offline_rules.final_answer(state["question"], subtasks)
            else:
                messages = [
                    SystemMessage(self.prompts.render("final_answer_system_prompt")),
                    HumanMessage(
                        self.prompts.render(
                            "final_answer_user_prompt",
                            question=state["question"],
                            subtask_results=_subtask_summary(subtasks, sources),
                            unanswered="\n".join(f"- {name}" for name in unanswered) or "なし",
                        )
                    ),
                ]
                text = _text(self._invoke(self._model(), messages, "create_answer"))
                valid = {number: number for number in range(1, len(sources) + 1)}
                text = renumber_citations(text, valid)
            answer = ensure_answer_sections(text, sources, unanswered)
            logger.debug("create_answer: %d source(s), unanswered %s", len(sources), unanswered)
            self._emit(
                {"type": "answer", "answer": answer, "sources": sources, "unanswered": unanswered}
            )
        return {"last_answer": answer}

    # ------------------------------------------------------------------ subgraph nodes
    def select_tools(self, state: AgentSubGraphState) -> dict[str, Any]:
        """Ask the model which tools to call (seed §4.2) → ``{"messages": [...]}``.

        The first attempt starts a fresh conversation; a retry continues the
        history *without* earlier tool calls and tool results, plus the advice.
        A reply without a tool call does not raise: it sets ``tool_call_missing``.
        """
        subtask = state["subtask"]
        attempt = state.get("challenge_count") or 0
        with _logged("select_tools", subtask, attempt):
            if attempt == 0:
                messages: list[BaseMessage] = [
                    SystemMessage(
                        self.prompts.render(
                            "subtask_system_prompt",
                            question=state["question"],
                            plan="\n".join(f"- {item}" for item in state.get("plan") or []),
                            subtask=subtask,
                        )
                    ),
                    HumanMessage(
                        self.prompts.render("subtask_tool_selection_user_prompt", subtask=subtask)
                    ),
                ]
            else:
                messages = drop_tool_messages(state.get("messages") or [])
                messages.append(
                    HumanMessage(
                        self.prompts.render(
                            "subtask_retry_user_prompt", advice=_last_advice(state) or "なし"
                        )
                    )
                )
            if self.offline:
                query = offline_rules.reformulate(subtask, attempt, _last_advice(state))
                calls = [
                    {
                        "name": tool.name,
                        "args": {"query": query},
                        "id": f"offline_{attempt}_{index}",
                        "type": "tool_call",
                    }
                    for index, tool in enumerate(self.tools)
                ]
                return {
                    "messages": [*messages, AIMessage(content="", tool_calls=calls)],
                    "tool_call_missing": False,
                }
            assert self._tool_model is not None
            response = self._invoke(self._tool_model, messages, "select_tools")
            if isinstance(response, AIMessage) and response.tool_calls:
                logger.debug(
                    "select_tools: %s",
                    [(call["name"], call["args"]) for call in response.tool_calls],
                )
                return {"messages": [*messages, response], "tool_call_missing": False}
            text = _text(response)
            logger.warning(
                "select_tools: the model called no tool for %r (attempt %d)", subtask, attempt + 1
            )
            update: dict[str, Any] = {"messages": messages, "tool_call_missing": True}
            if text:
                update["fallback_answer"] = text
            return update

    def execute_tools(self, state: AgentSubGraphState) -> dict[str, Any]:
        """Run the tool calls of the last message (seed §4.3), numbering the passages."""
        subtask = state["subtask"]
        attempt = state.get("challenge_count") or 0
        messages = list(state.get("messages") or [])
        last = messages[-1] if messages else None
        with _logged("execute_tools", subtask, attempt):
            if state.get("tool_call_missing") or not (
                isinstance(last, AIMessage) and last.tool_calls
            ):
                self._emit(
                    {
                        "type": "tool_results",
                        "subtask": subtask,
                        "attempt": attempt + 1,
                        "results": [],
                        "error": "no_tool_call",
                    }
                )
                return {"tool_results": [[]]}
            results: list[ToolResult] = []
            errors: dict[int, str] = {}
            for index, call in enumerate(last.tool_calls):
                args_text = json.dumps(call["args"], ensure_ascii=False)
                tool = self.tool_map.get(call["name"])
                query = call["args"].get("query")
                if tool is None:
                    errors[index] = (
                        f"エラー: ツール {call['name']!r} はありません。"
                        f"使えるツール: {', '.join(self.tool_map)}"
                    )
                elif not isinstance(query, str) or not query.strip():
                    errors[index] = "エラー: 引数 query に検索語（文字列）を指定してください。"
                outputs = tool.search(query) if tool and index not in errors else []  # type: ignore[arg-type]
                logger.debug(
                    "execute_tools: %s(%s) → %d passage(s)", call["name"], args_text, len(outputs)
                )
                results.append(ToolResult(tool_name=call["name"], args=args_text, results=outputs))
            numbers = {source.citation: source.number for source in number_sources(results)}
            tool_messages: list[BaseMessage] = []
            for index, (call, result) in enumerate(zip(last.tool_calls, results, strict=True)):
                tool = self.tool_map.get(call["name"])
                content = errors.get(index) or _format_tool_result(
                    result, numbers, tool.note if tool else None
                )
                tool_messages.append(ToolMessage(content=content, tool_call_id=call["id"] or ""))
            self._emit(
                {
                    "type": "tool_results",
                    "subtask": subtask,
                    "attempt": attempt + 1,
                    "results": [
                        {
                            **result.model_dump(mode="json"),
                            "note": (self.tool_map[result.tool_name].note)
                            if result.tool_name in self.tool_map
                            else None,
                        }
                        for result in results
                    ],
                }
            )
        return {"messages": [*messages, *tool_messages], "tool_results": [results]}

    def create_subtask_answer(self, state: AgentSubGraphState) -> dict[str, Any]:
        """Answer the subtask from this attempt's passages, citing them (seed §4.4)."""
        subtask = state["subtask"]
        attempt = state.get("challenge_count") or 0
        messages = list(state.get("messages") or [])
        with _logged("create_subtask_answer", subtask, attempt):
            if state.get("tool_call_missing"):
                update = self._ungrounded_answer(state)
            elif self.offline:
                outputs = [
                    output for result in _attempt_results(state) for output in result.results
                ]
                answer, sources = offline_rules.subtask_answer(subtask, outputs)
                update = {"subtask_answer": answer, "sources": list(sources)}
            else:
                numbered = number_sources(_attempt_results(state))
                listed = "\n".join(f"[{item.number}] {item.citation}" for item in numbered)
                prompt = HumanMessage(
                    self.prompts.render(
                        "subtask_answer_user_prompt",
                        subtask=subtask,
                        sources=listed or "（なし: 検索結果は見つかりませんでした）",
                    )
                )
                response = self._invoke(self._model(), [*messages, prompt], "create_subtask_answer")
                reply = _text(response)
                answer, sources = _cite(reply, numbered)
                messages = [*messages, AIMessage(content=reply)]
                update = {"messages": messages, "subtask_answer": answer, "sources": sources}
            logger.debug(
                "create_subtask_answer: %r sources=%s", update["subtask_answer"], update["sources"]
            )
            self._emit(
                {
                    "type": "subtask_answer",
                    "subtask": subtask,
                    "attempt": attempt + 1,
                    "answer": update["subtask_answer"],
                    "sources": update["sources"],
                    "grounded": not state.get("tool_call_missing"),
                }
            )
        return update

    def reflect_subtask(self, state: AgentSubGraphState) -> dict[str, Any]:
        """Judge the subtask answer (seed §4.5); ends the subtask at the attempt cap."""
        subtask = state["subtask"]
        attempt = state.get("challenge_count") or 0
        messages = list(state.get("messages") or [])
        with _logged("reflect_subtask", subtask, attempt):
            if state.get("tool_call_missing"):
                reflection = ReflectionResult(advice=NO_TOOL_CALL_ADVICE, is_completed=False)
            elif self.offline:
                outputs = [
                    output for result in _attempt_results(state) for output in result.results
                ]
                reflection = offline_rules.reflect(subtask, outputs, attempt)
            else:
                prompt = HumanMessage(
                    self.prompts.render("subtask_reflection_user_prompt", subtask=subtask)
                )
                reflection = self._structured(ReflectionResult, [*messages, prompt])
                verdict = "OK（完了）" if reflection.is_completed else "NG（未完了）"
                summary = f"評価: {verdict}\nアドバイス: {reflection.advice or 'なし'}"
                messages = [*messages, prompt, AIMessage(content=summary)]
            count = attempt + 1
            update: dict[str, Any] = {
                "messages": messages,
                "reflection_results": [reflection],
                "challenge_count": count,
                "is_completed": reflection.is_completed,
            }
            searched = not state.get("tool_call_missing") or _searched_before(state)
            if not reflection.is_completed and count >= self.max_challenge_count and searched:
                update["subtask_answer"] = _give_up_text(
                    subtask, count, state.get("subtask_answer") or ""
                )
                logger.warning(
                    "reflect_subtask: %r not completed after %d attempt(s)", subtask, count
                )
            logger.debug("reflect_subtask: %r → %s", subtask, reflection)
            self._emit(
                {
                    "type": "reflection",
                    "subtask": subtask,
                    "attempt": count,
                    "is_completed": reflection.is_completed,
                    "advice": reflection.advice,
                }
            )
        return update

    # ------------------------------------------------------------------ routing
    def _should_continue_exec_subtasks(self, state: AgentState) -> list[Send]:
        """One ``Send("execute_subtasks", ...)`` per subtask of the plan (seed §6.1)."""
        return [
            Send(
                "execute_subtasks",
                {"question": state["question"], "plan": state["plan"], "current_step": index},
            )
            for index, _ in enumerate(state["plan"])
        ]

    def _should_continue_exec_subtask_flow(self, state: AgentSubGraphState) -> str:
        """``"end"`` when completed or out of attempts, else ``"continue"`` (seed §6.2)."""
        if state.get("is_completed") or (state.get("challenge_count") or 0) >= (
            self.max_challenge_count
        ):
            return "end"
        return "continue"

    # ------------------------------------------------------------------ graphs
    def _create_subgraph(self) -> CompiledStateGraph[Any, Any, Any, Any]:
        """The subtask loop (seed §5.2)."""
        workflow = StateGraph(AgentSubGraphState)
        workflow.add_node("select_tools", self.select_tools)
        workflow.add_node("execute_tools", self.execute_tools)
        workflow.add_node("create_subtask_answer", self.create_subtask_answer)
        workflow.add_node("reflect_subtask", self.reflect_subtask)
        workflow.add_edge(START, "select_tools")
        workflow.add_edge("select_tools", "execute_tools")
        workflow.add_edge("execute_tools", "create_subtask_answer")
        workflow.add_edge("create_subtask_answer", "reflect_subtask")
        workflow.add_conditional_edges(
            "reflect_subtask",
            self._should_continue_exec_subtask_flow,
            {"continue": "select_tools", "end": END},
        )
        return workflow.compile()

    def _execute_subgraph(self, state: AgentState) -> dict[str, Any]:
        """Run the subtask loop for ``plan[current_step]`` → ``{"subtask_results": [Subtask]}``."""
        if self._subgraph is None:
            self._subgraph = self._create_subgraph()
        step = state.get("current_step") or 0
        subtask = state["plan"][step]
        initial: AgentSubGraphState = {
            "question": state["question"],
            "plan": list(state["plan"]),
            "subtask": subtask,
            "current_step": step,
            "is_completed": False,
            "messages": [],
            "challenge_count": 0,
            "tool_results": [],
            "reflection_results": [],
            "subtask_answer": "",
            "sources": [],
            "tool_call_missing": False,
        }
        with _logged("execute_subtasks", subtask):
            result = self._subgraph.invoke(
                initial, {"recursion_limit": 4 * self.max_challenge_count + 10}
            )
            done = Subtask(
                task_name=subtask,
                tool_results=[list(attempt) for attempt in result.get("tool_results") or []],
                reflection_results=list(result.get("reflection_results") or []),
                is_completed=bool(result.get("is_completed")),
                subtask_answer=result.get("subtask_answer") or "",
                challenge_count=result.get("challenge_count") or 0,
                sources=list(result.get("sources") or []),
            )
            self._emit({"type": "subtask_done", "subtask": done.model_dump(mode="json")})
        return {"subtask_results": [done]}

    def create_graph(self) -> CompiledStateGraph[Any, Any, Any, Any]:
        """The main graph (seed §5.1)."""
        workflow = StateGraph(AgentState)
        workflow.add_node("create_plan", self.create_plan)
        workflow.add_node("execute_subtasks", self._execute_subgraph)
        workflow.add_node("create_answer", self.create_answer)
        workflow.add_edge(START, "create_plan")
        workflow.add_conditional_edges(
            "create_plan", self._should_continue_exec_subtasks, ["execute_subtasks"]
        )
        workflow.add_edge("execute_subtasks", "create_answer")
        workflow.set_finish_point("create_answer")
        return workflow.compile()

    def run_agent(self, question: str, *, on_event: EventHandler | None = None) -> AgentResult:
        """Answer ``question``; ``on_event`` receives progress events (from worker threads).

        Raises:
            UserInputError: The question is empty.
            LLMError: The model service failed or answered unusably (with a hint).
        """
        if not question or not question.strip():
            raise UserInputError("the question is empty", hint="ask a question about the system")
        if self._graph is None:
            self._graph = self.create_graph()
        config: Any = {
            "max_concurrency": self.max_parallel_subtasks,
            "configurable": {EVENT_HANDLER_KEY: on_event},
        }
        logger.info("run_agent: start (%s)", "offline" if self.offline else "LLM")
        result = self._graph.invoke({"question": question.strip(), "current_step": 0}, config)
        plan = list(result["plan"])
        subtasks = _in_plan_order(result.get("subtask_results") or [], plan)
        logger.info("run_agent: done (%d subtask(s))", len(subtasks))
        return AgentResult(
            question=question,
            plan=Plan(subtasks=plan),
            subtasks=subtasks,
            answer=result["last_answer"],
            sources=collect_sources(subtasks),
            unanswered=unanswered_subtasks(subtasks),
            offline=self.offline,
        )

    # ------------------------------------------------------------------ helpers
    def _model(self) -> BaseChatModel:
        assert self.chat_model is not None, "offline mode has no chat model"
        return self.chat_model

    def _structured(self, schema: type[Any], messages: list[BaseMessage]) -> Any:
        return invoke_structured(
            self._model(),
            schema,
            messages,
            method=self.settings.structured_output_method,
            reasks=self.settings.structured_output_reasks,
        )

    @staticmethod
    def _invoke(model: Runnable[Any, Any], messages: list[BaseMessage], step: str) -> BaseMessage:
        try:
            response = model.invoke(messages)
        except openai.APIError as exc:
            raise to_llm_error(exc) from exc
        if not isinstance(response, BaseMessage):
            raise LLMError(
                f"{step}: the chat model returned {type(response).__name__}, not a message",
                hint="use a LangChain chat model",
            )
        return response

    def _ungrounded_answer(self, state: AgentSubGraphState) -> dict[str, Any]:
        """The answer of an attempt whose model reply had no tool call."""
        previous = state.get("subtask_answer") or ""
        if previous and _searched_before(state):  # keep the earlier grounded answer
            return {"subtask_answer": previous, "sources": list(state.get("sources") or [])}
        answer = (
            "検索ツールを呼び出せなかったため、資料を検索できず、"
            "資料に基づく回答を作成できませんでした。"
        )
        fallback = (state.get("fallback_answer") or "").strip()
        if fallback:
            answer += f"\n\n{UNGROUNDED_LABEL}:\n{fallback}"
        return {"subtask_answer": answer, "sources": []}

    @staticmethod
    def _emit(event: dict[str, Any]) -> None:
        try:
            config = get_config()
        except RuntimeError:  # called outside a graph run (e.g. a unit test)
            return
        handler = (config.get("configurable") or {}).get(EVENT_HANDLER_KEY)
        if handler is not None:
            handler(event)


# --------------------------------------------------------------------------- module helpers


@contextmanager
def _logged(step: str, subtask: str | None = None, attempt: int | None = None) -> Iterator[None]:
    label = step
    if subtask is not None:
        label += f" [{subtask}]"
    if attempt is not None:
        label += f" attempt {attempt + 1}"
    logger.info("%s: start", label)
    try:
        yield
    except Exception as exc:
        logger.error("%s: failed: %s", label, exc)
        raise
    logger.info("%s: done", label)


def _cite(reply: str, numbered: Sequence[NumberedSource]) -> tuple[str, list[str]]:
    """The answer renumbered so ``[i]`` is ``sources[i-1]``, and those sources.

    Cited numbers that match no passage are removed. When the answer cites
    nothing, every available source is listed (in order) and the text is kept.
    """
    by_number = {item.number: item.citation for item in numbered}
    cited = [number for number in cited_numbers(reply) if number in by_number]
    if not cited:
        return renumber_citations(reply, {}), [item.citation for item in numbered]
    mapping = {number: index for index, number in enumerate(cited, start=1)}
    return renumber_citations(reply, mapping), [by_number[number] for number in cited]


def _give_up_text(subtask: str, attempts: int, last_answer: str) -> str:
    text = f"「{subtask}」について、{attempts}回検索しましたが十分な回答が見つかりませんでした。"
    if last_answer:
        text += f"\n\n参考（不完全な回答）:\n{last_answer}"
    return text


def _in_plan_order(results: Sequence[Subtask], plan: Sequence[str]) -> list[Subtask]:
    position = {name: index for index, name in reversed(list(enumerate(plan)))}
    return sorted(results, key=lambda subtask: position.get(subtask.task_name, len(plan)))


def _subtask_summary(subtasks: Sequence[Subtask], sources: Sequence[str]) -> str:
    """Each subtask's answer with its citations renumbered over all subtasks."""
    global_number = {source: index for index, source in enumerate(sources, start=1)}
    blocks = []
    for index, subtask in enumerate(subtasks, start=1):
        mapping = {
            local: global_number[source] for local, source in enumerate(subtask.sources, start=1)
        }
        status = "完了" if subtask.is_completed else "未完了: 十分な回答が見つかりませんでした"
        answer = renumber_citations(subtask.subtask_answer, mapping)
        cited = "、".join(f"[{global_number[source]}] {source}" for source in subtask.sources)
        blocks.append(
            f"### サブタスク{index}: {subtask.task_name}（{status}）\n{answer}\n"
            f"出典: {cited or 'なし'}"
        )
    return "\n\n".join(blocks)
