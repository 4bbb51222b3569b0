"""The persisted state of a plan run, so a paused run resumes in another process.

Saved as ``runs/{plan_id}/{run_id}.state.json`` when a run starts and whenever an
invocation (start, resume, rerun) ends::

    {"format": "keiri-agent/run-state", "version": 1,
     "run_id": "run_1a2b3c4d5e6f", "plan_id": "invoice", "status": "paused",
     "created_at": "...Z", "updated_at": "...Z", "log_path": "invoice/...jsonl",  # under runs_dir
     "plan": {...},                  # the Plan as run (by alias, so it validates again)
     "vars": {...},                  # the caller's vars overrides (unresolved plan vars
                                     # are re-resolved on resume; env/config never saved)
     "answers": {"ask": {...}},      # human input given so far, by node path
     "counters": {"run_...": 1},     # subflow numbering per run id
     "last_seq": 12,                 # the last event's seq (a resume numbers after it)
     "graph": {"nodes": {"parse": NodeState, ...}}}

    NodeState = {"status": "pending|success|skipped|failed|waiting|paused|cancelled",
                 "outputs": {alias: value} | null, "attempts": n, "error": {...} | null,
                 "request": {...} | null, "block": "id" | null, "duration_ms": x | null,
                 "loop": {"kind": "foreach|while", "iterations": {"0": {"status": ...,
                          "graph": {...}}}, "count": n} | null,
                 "subflow": {"run_id", "plan", "inputs", "graph"} | null}
                 (fields at their default — null, 0 — are left out)

Values are JSON with tags for the rest (``encode``/``decode``): bytes and bytearray
``{"__bytes__": base64}``, datetime ``{"__datetime__": iso}``, date ``{"__date__": iso}``,
time ``{"__time__": iso}``, Decimal ``{"__decimal__": "1.10"}``, tuple
``{"__tuple__": [...]}``, NaN/±inf ``{"__float__": "nan"}``, and a user mapping whose
only key looks like a tag ``{"__dict__": {...}}``. Mapping keys must be text. Anything
else (DataFrames, custom objects, sets) raises ``StateEncodingError`` naming its path.

What is kept (seed 002 §12, decided): a paused run must resume from another process,
so the answers given so far and the nodes' outputs are saved as they are, uploaded
file bytes included; they are not copied anywhere else (the JSONL log shows bytes
as ``<bytes n>``). The file is readable by its owner only, errors are saved with
secrets masked, and the configured API keys are never written. Delete
``runs/{plan_id}/{run_id}.state.json`` (and its ``.lock``) to drop a finished run's data.

One invocation owns a run at a time (``plans.run.run_lock``): the runner reads the
state only once it holds the run's lock, and saves it only while it holds it.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import math
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

from keiri_agent.errors import UserInputError
from keiri_agent.events import utc_timestamp
from keiri_agent.masking import mask_known
from keiri_agent.plans.dsl.models import Plan
from keiri_agent.plans.run.run_log import log_relative_path, safe_path_part
from keiri_agent.private import write_private

STATE_FORMAT = "keiri-agent/run-state"
STATE_VERSION = 1
SUPPORTED_TYPES = (
    "None, bool, int, float, str, list, tuple, dict with str keys, bytes, bytearray, "
    "datetime, date, time, Decimal"
)
_TAGS = frozenset(
    {"__bytes__", "__datetime__", "__date__", "__time__", "__decimal__", "__tuple__", "__float__"}
)
_RUN_ID = re.compile(r"^[A-Za-z0-9_\-]{1,100}$")
FINISHED = frozenset({"success", "skipped", "failed"})
"""Node statuses that a resume keeps (a rerun resets them explicitly)."""


class StateEncodingError(UserInputError):
    """A value the run state cannot store (names its path and type)."""

    code = "STATE_ENCODING"


_LEAVES = (str, bool, int, float, Decimal, bytes, bytearray, dt.date, dt.time, type(None))


def _storable(value: Any) -> bool:
    kind = type(value)
    if kind is dict:
        return all(type(k) is str and _storable(v) for k, v in value.items())
    if kind is list or kind is tuple:
        return all(_storable(item) for item in value)
    if isinstance(value, _LEAVES):
        return True
    if isinstance(value, Mapping):
        return all(isinstance(k, str) and _storable(v) for k, v in value.items())
    return isinstance(value, list | tuple) and all(_storable(item) for item in value)


def unsupported_value(value: Any, path: str = "") -> tuple[str, str] | None:
    """The first ``(path, type name)`` inside ``value`` that cannot be saved, or None."""
    return None if _storable(value) else _find_unsupported(value, path)


def _find_unsupported(value: Any, path: str) -> tuple[str, str] | None:
    if value is None or isinstance(value, str | bool | int | float | Decimal):
        return None
    if isinstance(value, bytes | bytearray | dt.date | dt.time):
        return None
    if isinstance(value, Mapping):
        for key, item in value.items():
            if not isinstance(key, str):
                return (f"{path}[{key!r}]", f"key of type {type(key).__name__}")
            found = _find_unsupported(item, f"{path}.{key}" if path else key)
            if found:
                return found
        return None
    if isinstance(value, list | tuple):
        for index, item in enumerate(value):
            found = _find_unsupported(item, f"{path}[{index}]")
            if found:
                return found
        return None
    return (path or "$", type(value).__name__)


class _Unsupported(Exception):
    """Internal: ``encode`` met a value it cannot store (the path is found afterwards)."""


_ESCAPED = _TAGS | {"__dict__"}
_isfinite = math.isfinite
_SCALARS = frozenset({str, int, bool, type(None)})


def _encode(value: Any) -> Any:
    kind = type(value)
    if kind in _SCALARS:
        return value
    if kind is dict:
        return _encode_dict(value)
    if kind is list:
        return [item if type(item) in _SCALARS else _encode(item) for item in value]
    return _encode_other(value)


def _encode_dict(value: dict[Any, Any]) -> Any:
    encoded = {}
    for key, item in value.items():
        if type(key) is not str:
            raise _Unsupported
        kind = type(item)
        if kind in _SCALARS or (kind is float and _isfinite(item)):
            encoded[key] = item  # a finite float too: stored as it is (``_encode_other``)
        elif kind is dict:
            encoded[key] = _encode_dict(item)
        else:
            encoded[key] = _encode(item)
    if len(encoded) == 1 and next(iter(encoded)) in _ESCAPED:
        return {"__dict__": encoded}
    return encoded


_TAGGED: tuple[tuple[type | tuple[type, ...], str, Any], ...] = (
    ((bytes, bytearray), "__bytes__", lambda v: base64.b64encode(bytes(v)).decode("ascii")),
    (dt.datetime, "__datetime__", lambda v: v.isoformat()),
    (dt.date, "__date__", lambda v: v.isoformat()),
    (dt.time, "__time__", lambda v: v.isoformat()),
    (Decimal, "__decimal__", str),
    (tuple, "__tuple__", lambda v: [_encode(item) for item in v]),
)
"""Types stored as ``{tag: text}`` (checked in order: a datetime is also a date)."""


def _encode_other(value: Any) -> Any:
    """Subclasses of the plain types, floats, and the tagged types."""
    if isinstance(value, str | bool | int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else {"__float__": repr(value)}
    for types, tag, convert in _TAGGED:
        if isinstance(value, types):
            return {tag: convert(value)}
    if isinstance(value, list):
        return [_encode(item) for item in value]
    if isinstance(value, Mapping):
        return _encode(dict(value))
    raise _Unsupported


def encode_graph(graph: GraphState) -> dict[str, Any]:
    """``encode(graph.to_dict())`` built in one pass (a save encodes every node's state);
    raises ``_Unsupported`` where ``encode`` would raise StateEncodingError."""
    nodes: dict[str, Any] = {}
    for node_id, node in graph.nodes.items():
        if type(node_id) is not str:
            raise _Unsupported
        status = node.status
        data: dict[str, Any] = {"status": status if type(status) is str else _encode(status)}
        if node.outputs is not None:
            outputs = node.outputs
            data["outputs"] = _encode_dict(outputs) if type(outputs) is dict else _encode(outputs)
        if node.error is not None:
            data["error"] = _encode(node.error)
        if node.request is not None:
            data["request"] = _encode(node.request)
        if node.block is not None:
            data["block"] = _encode(node.block)
        duration = node.duration_ms
        if duration is not None:
            finite = type(duration) is float and _isfinite(duration)
            data["duration_ms"] = duration if finite else _encode(duration)
        if node.attempts:
            data["attempts"] = _encode(node.attempts)
        if node.loop is not None:
            data["loop"] = _encode(node.loop.to_dict())
        if node.subflow is not None:
            data["subflow"] = _encode(node.subflow.to_dict())
        nodes[node_id] = data
    if len(nodes) == 1 and next(iter(nodes)) in _ESCAPED:
        return {"nodes": {"__dict__": nodes}}
    return {"nodes": nodes}


def encode(value: Any) -> Any:
    """JSON-compatible form of ``value`` with tags (see module docstring).

    Raises StateEncodingError naming the path and type of the first value that
    cannot be stored.
    """
    try:
        return _encode(value)
    except _Unsupported:
        path, type_name = unsupported_value(value) or ("$", "value")
        raise StateEncodingError(
            f"{path} を実行の記録に保存できません（{type_name} の値は保存できません）",
            hint=f"保存できるのは {SUPPORTED_TYPES} です。ブロックで値を変換してください",
            details={"path": path, "type": type_name},
        ) from None


_dumps = json.JSONEncoder(ensure_ascii=False, allow_nan=False).encode
"""``json.dumps(encoded, ensure_ascii=False, allow_nan=False)`` of ``encode``'s result."""


def decode(value: Any) -> Any:
    """The inverse of ``encode``."""
    if isinstance(value, list):
        return [decode(item) for item in value]
    if not isinstance(value, dict):
        return value
    if len(value) == 1:
        tag, inner = next(iter(value.items()))
        if tag == "__dict__":
            return {key: decode(item) for key, item in inner.items()}
        if tag == "__bytes__":
            return base64.b64decode(inner)
        if tag == "__datetime__":
            return dt.datetime.fromisoformat(inner)
        if tag == "__date__":
            return dt.date.fromisoformat(inner)
        if tag == "__time__":
            return dt.time.fromisoformat(inner)
        if tag == "__decimal__":
            return Decimal(inner)
        if tag == "__tuple__":
            return tuple(decode(item) for item in inner)
        if tag == "__float__":
            return float(inner)
    return {key: decode(item) for key, item in value.items()}


@dataclass
class GraphState:
    """The nodes of one graph execution (a plan, a loop iteration or a subflow)."""

    nodes: dict[str, NodeState] = field(default_factory=dict)

    def node(self, node_id: str) -> NodeState:
        """The node's state, created pending on first use."""
        state = self.nodes.get(node_id)
        if state is None:
            state = self.nodes[node_id] = NodeState()
        return state

    def to_dict(self) -> dict[str, Any]:
        return {"nodes": {node_id: node.to_dict() for node_id, node in self.nodes.items()}}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> GraphState:
        nodes = data.get("nodes", {})
        return cls({node_id: NodeState.from_dict(node) for node_id, node in nodes.items()})


@dataclass
class LoopState:
    """Loop progress: every iteration's graph and status; ``count`` finished (while)."""

    kind: str
    iterations: dict[int, GraphState] = field(default_factory=dict)
    statuses: dict[int, str] = field(default_factory=dict)
    count: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "count": self.count,
            "iterations": {
                str(index): {"status": self.statuses.get(index, "pending"), "graph": g.to_dict()}
                for index, g in sorted(self.iterations.items())
            },
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> LoopState:
        state = cls(kind=data["kind"], count=int(data.get("count", 0)))
        for key, item in data.get("iterations", {}).items():
            state.iterations[int(key)] = GraphState.from_dict(item["graph"])
            state.statuses[int(key)] = item["status"]
        return state


@dataclass
class SubflowState:
    """A nested run: its id, the plan it runs (as loaded), its inputs and its graph."""

    run_id: str
    plan: dict[str, Any]
    inputs: dict[str, Any]
    graph: GraphState = field(default_factory=GraphState)

    def to_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "plan": self.plan,
            "inputs": self.inputs,
            "graph": self.graph.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SubflowState:
        return cls(
            run_id=data["run_id"],
            plan=dict(data["plan"]),
            inputs=dict(data.get("inputs", {})),
            graph=GraphState.from_dict(data.get("graph", {})),
        )


@dataclass
class NodeState:
    """One node's progress and results (``outputs`` by alias)."""

    status: str = "pending"
    outputs: dict[str, Any] | None = None
    attempts: int = 0
    error: dict[str, Any] | None = None
    request: dict[str, Any] | None = None
    block: str | None = None
    duration_ms: float | None = None
    loop: LoopState | None = None
    subflow: SubflowState | None = None

    def to_dict(self) -> dict[str, Any]:
        """The fields that differ from their defaults (``status`` always)."""
        data: dict[str, Any] = {"status": self.status}
        # written out (not a loop over the names): a save calls this for every node
        if self.outputs is not None:
            data["outputs"] = self.outputs
        if self.error is not None:
            data["error"] = self.error
        if self.request is not None:
            data["request"] = self.request
        if self.block is not None:
            data["block"] = self.block
        if self.duration_ms is not None:
            data["duration_ms"] = self.duration_ms
        if self.attempts:
            data["attempts"] = self.attempts
        if self.loop is not None:
            data["loop"] = self.loop.to_dict()
        if self.subflow is not None:
            data["subflow"] = self.subflow.to_dict()
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> NodeState:
        return cls(
            status=data.get("status", "pending"),
            outputs=data.get("outputs"),
            attempts=int(data.get("attempts", 0)),
            error=data.get("error"),
            request=data.get("request"),
            block=data.get("block"),
            duration_ms=data.get("duration_ms"),
            loop=LoopState.from_dict(data["loop"]) if data.get("loop") else None,
            subflow=SubflowState.from_dict(data["subflow"]) if data.get("subflow") else None,
        )


@dataclass
class RunState:
    """Everything needed to continue a run: plan, vars, answers, node states."""

    run_id: str
    plan_id: str
    plan: dict[str, Any]
    log_path: str
    status: str = "running"
    vars: dict[str, Any] = field(default_factory=dict)
    answers: dict[str, Any] = field(default_factory=dict)
    counters: dict[str, int] = field(default_factory=dict)
    graph: GraphState = field(default_factory=GraphState)
    last_seq: int = 0
    """The ``seq`` of the last event of the run: a resumed invocation numbers after it."""
    reruns: int = 0
    """How many times a user re-ran part of the run (``rerun_from_node``): part of
    every block's idempotency key, so a re-run does its effects again while a run
    taken up after a crash does not repeat them."""
    started_by: str = ""
    """The login of the person who started the run (empty: not recorded): who owns it
    and who may not approve it (issue 33)."""
    created_at: str = field(default_factory=utc_timestamp)
    updated_at: str = field(default_factory=utc_timestamp)
    _plan_text: tuple[dict[str, Any], str] | None = field(
        default=None, init=False, repr=False, compare=False
    )
    """``plan`` as written by ``save_state`` (masked JSON), with the dict it was made
    from: the plan does not change during a run, and a 1,000-node plan costs as much
    to encode as the rest of the state."""

    def plan_text(self) -> str:
        """``plan`` as masked JSON text, encoded once per plan dict."""
        cached = self._plan_text
        if cached is None or cached[0] is not self.plan:
            cached = self._plan_text = (self.plan, mask_known(_plan_json(self.plan)))
        return cached[1]

    def to_dict(self, *, graph: bool = True) -> dict[str, Any]:
        """The state as a mapping (without ``graph`` when not ``graph``: ``save_state``
        encodes the graph itself)."""
        data: dict[str, Any] = {
            "format": STATE_FORMAT,
            "version": STATE_VERSION,
            "run_id": self.run_id,
            "plan_id": self.plan_id,
            "status": self.status,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "log_path": self.log_path,
            "plan": self.plan,
            "vars": self.vars,
            "answers": self.answers,
            "counters": self.counters,
            "last_seq": self.last_seq,
            "reruns": self.reruns,
            "started_by": self.started_by,
        }
        if graph:
            data["graph"] = self.graph.to_dict()
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RunState:
        if data.get("format") != STATE_FORMAT or data.get("version") != STATE_VERSION:
            raise UserInputError(
                f"実行状態のファイルの形式（{data.get('format')!r} v{data.get('version')!r}）が"
                f"このバージョン（v{STATE_VERSION}）と違うため再開できません",
                hint="この実行は再開せず、Plan を最初から実行し直してください",
            )
        return cls(
            run_id=data["run_id"],
            plan_id=data["plan_id"],
            plan=dict(data["plan"]),
            log_path=data["log_path"],
            status=data["status"],
            vars=dict(data.get("vars", {})),
            answers=dict(data.get("answers", {})),
            counters={key: int(value) for key, value in data.get("counters", {}).items()},
            graph=GraphState.from_dict(data["graph"]),
            last_seq=int(data.get("last_seq", 0)),
            reruns=int(data.get("reruns", 0)),
            started_by=str(data.get("started_by") or ""),
            created_at=data["created_at"],
            updated_at=data["updated_at"],
        )


def state_path(runs_dir: Path, plan_id: str, run_id: str) -> Path:
    """``runs_dir/{plan_id}/{run_id}.state.json``."""
    return runs_dir / safe_path_part(plan_id) / f"{run_id}.state.json"


def save_state(runs_dir: Path, state: RunState) -> Path:
    """Write the state atomically (temporary file, then rename); return its path.

    The file is created readable by its owner only (0600, new folders 0700): it holds
    the answers, uploaded files included, so that another process can resume the run.
    Registered secrets (``masking.register_secret``: the configured API keys) are
    written as ``***`` wherever they appear.
    """
    state.updated_at = utc_timestamp()
    path = state_path(runs_dir, state.plan_id, state.run_id)
    data = state.to_dict(graph=False)
    del data["plan"]
    encoded = encode(data)
    try:
        encoded["graph"] = encode_graph(state.graph)
    except _Unsupported:
        encode(state.to_dict())  # raises StateEncodingError naming the value's path
        raise
    rest = mask_known(_dumps(encoded))
    text = f'{rest[:-1]}, "plan": {state.plan_text()}}}'
    return write_private(path, text)


def find_state(runs_dir: Path, run_id: str) -> Path:
    """The state file of ``run_id`` under ``runs_dir``; UserInputError when there is none."""
    if not _RUN_ID.match(run_id):
        raise UserInputError(
            f"実行 ID {run_id!r} の形式が正しくありません",
            hint="`plan run` が表示した実行 ID（run_1a2b3c4d5e6f のような形）を指定してください",
        )
    matches = sorted(runs_dir.glob(f"**/{run_id}.state.json"))
    if not matches:
        raise UserInputError(
            f"実行 {run_id!r} が見つかりません（{runs_dir} の下にありません）",
            hint="`plan run` が表示した実行 ID か、同じ作業フォルダ（KEIRI_AGENT_HOME）で"
            "実行しているかを確認してください",
            details={"run_id": run_id, "runs_dir": str(runs_dir)},
        )
    return matches[0]


def load_state(runs_dir: Path, run_id: str) -> RunState:
    """Read and decode the state of ``run_id``."""
    return read_state(find_state(runs_dir, run_id))


class RunStateCorruptError(UserInputError):
    """A run state file that cannot be read back (damaged, cut short, not a state)."""

    code = "RUN_STATE_CORRUPT"


_STATE_KEYS: tuple[tuple[str, type | tuple[type, ...]], ...] = (
    ("run_id", str),
    ("plan_id", str),
    ("status", str),
    ("created_at", str),
    ("updated_at", str),
    ("log_path", str),
    ("plan", dict),
    ("vars", dict),
    ("answers", dict),
    ("counters", dict),
    ("last_seq", int),
    ("reruns", int),
    ("graph", dict),
)
_LOG_NAME = re.compile(r"^\d{8}T\d{6}Z-(?P<run_id>[A-Za-z0-9_\-]{1,100})\.jsonl$")


def read_state(path: Path) -> RunState:
    """Read and decode the state file at ``path`` (found by its run id).

    Anything that is not a whole run state of this run — an empty, cut-short or
    binary file, JSON of another shape, a bad tag — raises ``RunStateCorruptError``
    (``RUN_STATE_CORRUPT``) naming the file and what to do (the runner does the
    same for a stored plan that no longer validates). The run id must be the one
    the file's name says, and ``log_path`` is re-derived, never trusted (a stored
    ``../../x.jsonl`` or an absolute path would make a resume write outside
    ``runs_dir``).
    """
    run_id = path.name.removesuffix(".state.json")
    try:
        data = decode(json.loads(path.read_text(encoding="utf-8")))
        if not isinstance(data, dict):
            raise ValueError(f"a {type(data).__name__}, not a mapping")
        for key, kind in _STATE_KEYS:
            if key in data and not isinstance(data[key], kind):
                raise ValueError(f"{key} is a {type(data[key]).__name__}")
        state = RunState.from_dict(data)
        if state.run_id != run_id:
            raise ValueError(f"run_id {state.run_id!r} in the file of {run_id!r}")
    except RunStateCorruptError:
        raise
    except OSError as error:
        raise UserInputError(
            f"実行 {run_id} の状態ファイル {path} を読めません: {error.strerror or error}",
            hint="ファイルの権限と、runs フォルダーのあるディスクを確認してください。",
            details={"run_id": run_id, "state_path": str(path)},
        ) from None
    except Exception as error:  # every kind of damage is one clear error
        raise corrupt_state(path, run_id, error) from None
    state.log_path = _checked_log_path(state)
    return state


def corrupt_state(path: Path, run_id: str, error: BaseException) -> RunStateCorruptError:
    """The RUN_STATE_CORRUPT error for the state file at ``path`` (``error``: what broke)."""
    return RunStateCorruptError(
        f"実行 {run_id} の状態ファイルが壊れているため、続きから再開できません: {path}",
        hint=(
            "この実行は再開できません。keiri-agent plan run で"
            "プランを最初から実行し直してください。"
            f"不要になった状態ファイル {path}（と同じ場所の {path.name}.lock）は"
            "削除して構いません。"
        ),
        details={
            "run_id": run_id,
            "state_path": str(path),
            "problem": f"{type(error).__name__}: {str(error)[:200]}",
        },
    )


def _checked_log_path(state: RunState) -> str:
    """The run's log under ``runs_dir``: the stored name when it is the one this
    runner gives (``{plan folder}/{timestamp}-{run_id}.jsonl``), else one derived
    from the plan id, the run id and the creation time."""
    folder = safe_path_part(state.plan_id).as_posix()
    stored = state.log_path.rpartition("/")
    found = _LOG_NAME.match(stored[2])
    if stored[0] == folder and found and found.group("run_id") == state.run_id:
        return state.log_path
    try:
        moment = dt.datetime.fromisoformat(state.created_at.replace("Z", "+00:00"))
    except ValueError:
        moment = dt.datetime.now(dt.UTC)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    return log_relative_path(state.plan_id, state.run_id, moment)


class _PerObject:
    """Values worked out once per object, for the newest ``size`` objects.

    An entry holds its object, so an id is never confused with a new object's.
    """

    def __init__(self, size: int) -> None:
        self._size = size
        self._entries: OrderedDict[int, tuple[object, Any]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: object, compute: Callable[[], Any]) -> Any:
        with self._lock:
            hit = self._entries.get(id(key))
            if hit is not None and hit[0] is key:
                self._entries.move_to_end(id(key))
                return hit[1]
        value = compute()
        with self._lock:
            self._entries[id(key)] = (key, value)
            while len(self._entries) > self._size:
                self._entries.popitem(last=False)
        return value


_plan_dicts = _PerObject(64)
_plan_texts = _PerObject(64)


def plan_to_dict(plan: Plan) -> dict[str, Any]:
    """The plan as a mapping (by alias) that ``plan_from_dict`` validates back.

    Worked out once per Plan object (plans are frozen; a 1,000-node plan's dump costs
    ≈ 10 ms): the dict is shared by the runs of that Plan, so read it, never change it.
    """
    result: dict[str, Any] = _plan_dicts.get(plan, lambda: plan.model_dump(by_alias=True))
    return result


def _plan_json(plan: dict[str, Any]) -> str:
    """``plan`` as JSON text before masking, encoded once per plan dict (the shared
    dict of ``plan_to_dict`` is encoded once for every run of its Plan)."""
    text: str = _plan_texts.get(plan, lambda: _dumps(plan if _stored_as_is(plan) else encode(plan)))
    return text


def _stored_as_is(value: Any) -> bool:
    """True when ``encode(value)`` equals ``value``: exact dicts (text keys, not one
    tag-like key) and lists of text, int, bool, None and finite floats (a plan's dump
    usually is); checking costs less than building the encoded copy."""
    kind = type(value)
    if kind is dict:
        if len(value) == 1 and next(iter(value)) in _ESCAPED:
            return False
        for key in value:
            if type(key) is not str:
                return False
        items = value.values()
    elif kind is list:
        items = value
    else:
        return kind in _SCALARS or (kind is float and _isfinite(value))
    for item in items:  # scalars checked inline: a call per value would cost more than encode
        kind = type(item)
        if not (kind in _SCALARS or (kind is float and _isfinite(item))) and not (
            (kind is dict or kind is list) and _stored_as_is(item)
        ):
            return False
    return True


def plan_from_dict(data: Mapping[str, Any]) -> Plan:
    """The Plan saved by ``plan_to_dict``."""
    return Plan.model_validate(data)
