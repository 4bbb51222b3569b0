"""The structured run log (seed 002 §8.4): JSONL events, summarised and with secrets masked.

One file per run, ``runs/{plan_id}/{timestamp}-{run_id}.jsonl`` (timestamp like
``20250101T100000Z``); a resumed or re-run invocation appends to the same file, and
the events of a subflow go to its parent's file under the subflow's own run id.
Every line is one JSON object::

    {"event": "node_complete", "run_id": "run_1a2b3c4d5e6f", "plan_id": "invoice",
     "node_id": "parse", "timestamp": "2025-01-01T10:00:01.250Z",
     "block": "file.parse_zip", "attempt": 1, "outputs": {"evidence": {...}},
     "duration_ms": 15.2}

Events (``EVENT_NAMES``) and their fields besides the common ones:

==================  ================================================================
``plan_start``      ``plan_version``, ``vars``; subflows: ``parent_run_id``
``plan_resumed``    ``mode`` (``resume`` | ``rerun``), ``from_node`` (rerun)
``node_start``      ``block`` (or ``type``: loop/subflow), ``attempt``
``node_complete``   ``outputs``, ``duration_ms``, ``attempt``
``node_skipped``    ``reason`` (``when_condition_false``), ``condition``
``loop_iteration``  ``iteration``; foreach: ``item``
``node_error``      ``error`` (``BlockError.to_dict()``), ``attempt``, ``retry`` (retries
                    done before this attempt), ``will_retry``
``node_waiting``    ``block``, ``request`` (what the human is asked)
``plan_paused``     ``waiting`` (node ids), ``total_duration_ms``
``plan_complete``   ``status``, ``total_duration_ms``, ``errors`` (count)
==================  ================================================================

Node ids of nodes inside loop bodies and subflows are paths from the top plan:
``each_file[3]/analyze``, ``validate/check``. Values are summarised (strings over 200
characters cut, long lists shortened with their count, bytes as ``<bytes n>``, depth
limited) and secrets masked (see ``sanitize``). The same ``RunEvent`` goes to the
``on_event`` callback, in log order.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import logging
import math
import re
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from types import MappingProxyType, TracebackType
from typing import Any, Final

from pydantic import SecretStr

_LOGGER = logging.getLogger(__name__)

EVENT_NAMES: Final = (
    "plan_start",
    "plan_resumed",
    "node_start",
    "node_complete",
    "node_skipped",
    "loop_iteration",
    "node_error",
    "node_waiting",
    "plan_paused",
    "plan_complete",
)

SECRET_KEY = re.compile(
    r"api[_-]?key|apikey|password|passwd|passphrase|secret|token(?!s)|authorization|credential"
    r"|private[_-]?key|my[_-]?number|bank[_-]?account|card[_-]?number"
    r"|パスワード|暗証番号|マイナンバー|個人番号|口座番号|カード番号",
    re.IGNORECASE,
)
"""Mapping keys whose values are never logged (credentials and personal numbers, §12).

``token`` but not ``tokens``: ``access_token`` is a secret, ``total_tokens`` a count."""
SECRET_VALUE = re.compile(
    r"\bsk-[A-Za-z0-9_\-]{16,}|\bBearer\s+[A-Za-z0-9._~+/\-]{8,}=*|\bAKIA[0-9A-Z]{16}\b"
)
"""Values that look like API keys or bearer tokens, wherever they appear in text."""
MASK: Final = "***"
MIN_KNOWN_SECRET: Final = 8
"""Registered secrets shorter than this are not masked (they would mask ordinary text)."""
_known_secrets: tuple[str, ...] = ()
MAX_TEXT: Final = 200
MAX_ITEMS: Final = 5
MAX_KEYS: Final = 30
MAX_DEPTH: Final = 6


_second: list[Any] = [None, ""]
"""The last whole second formatted by ``utc_timestamp`` (formatting is the costly part)."""


def utc_timestamp(moment: dt.datetime | None = None) -> str:
    """``2025-01-01T10:00:00.123Z`` (UTC, milliseconds)."""
    if moment is None:
        now = time.time()
        second = int(now)
        cached_second, text = _second
        if cached_second != second:
            text = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second))
            _second[:] = [second, text]
        return f"{text}.{int((now - second) * 1000):03d}Z"
    moment = moment.astimezone(dt.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def register_secret(value: str | SecretStr | None) -> None:
    """Mask ``value`` literally wherever it appears in logs, errors and run states.

    ``PlanRunner`` registers the configured API keys (``Settings``), so a key that is
    not shaped like ``sk-...`` (an Azure key, say) is masked too. Values shorter than
    ``MIN_KNOWN_SECRET`` characters are ignored. Registration lasts for the process.
    """
    global _known_secrets
    text = value.get_secret_value() if isinstance(value, SecretStr) else value
    if text and len(text) >= MIN_KNOWN_SECRET and text not in _known_secrets:
        _known_secrets = (*_known_secrets, text)


def mask_known(text: str) -> str:
    """``text`` with every registered secret (``register_secret``) replaced by ``***``."""
    for secret in _known_secrets:
        if secret in text:
            text = text.replace(secret, MASK)
    return text


def mask_text(text: str) -> str:
    """``text`` with key-like substrings (``sk-...``, ``Bearer ...``) and registered
    secrets replaced by ``***``."""
    if _known_secrets:
        text = mask_known(text)
    if "sk-" in text or "Bearer" in text or "AKIA" in text:
        return SECRET_VALUE.sub(MASK, text)
    return text


def mask_secrets(value: Any) -> Any:
    """``value`` with secrets masked as in ``sanitize`` but nothing summarised.

    For error dicts kept in the run state and shown to users: the values under
    secret-looking keys become ``***`` and text is passed through ``mask_text``;
    the shape (and non-text values) stay as they are.
    """
    if isinstance(value, str):
        return mask_text(value)
    if isinstance(value, Mapping):
        return {
            key: MASK if item is not None and _is_secret_key(str(key)) else mask_secrets(item)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [mask_secrets(item) for item in value]
    if isinstance(value, tuple):
        return tuple(mask_secrets(item) for item in value)
    return value


_PASS = frozenset({type(None), bool, int})


@functools.lru_cache(maxsize=4096)
def _is_secret_key(name: str) -> bool:
    return SECRET_KEY.search(name) is not None


def sanitize(value: Any, *, depth: int = 0, max_depth: int = MAX_DEPTH) -> Any:
    """A JSON-compatible summary of ``value`` that is safe to log.

    Strings over 200 characters keep their start and say their length; lists keep
    their first 5 items and say their count; mappings keep 30 keys; bytes become
    ``<bytes n>``; containers deeper than ``max_depth`` become ``<dict n keys>`` /
    ``<list n items>``; dates become ISO text; other objects ``<TypeName>``. Values
    under secret-looking keys become ``***`` and key-like text is masked.
    """
    kind = type(value)
    if kind in _PASS:
        return value
    if kind is str or isinstance(value, str):
        text = mask_text(value)
        if len(text) > MAX_TEXT:
            return f"{text[:MAX_TEXT]}… <{len(value)} chars>"
        return text
    if isinstance(value, bool | int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, bytes | bytearray | memoryview):
        return f"<bytes {len(value)}>"
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, Mapping):
        if depth >= max_depth:
            return f"<dict {len(value)} keys>"
        result: dict[str, Any] = {}
        for index, (key, item) in enumerate(value.items()):
            if index >= MAX_KEYS:
                result["…"] = f"<{len(value) - MAX_KEYS} more keys>"
                break
            name = str(key)
            if item is not None and _is_secret_key(name):
                result[name] = MASK
            else:
                result[name] = sanitize(item, depth=depth + 1, max_depth=max_depth)
        return result
    if isinstance(value, list | tuple | set | frozenset):
        items = list(value) if not isinstance(value, list) else value
        if depth >= max_depth:
            return f"<list {len(items)} items>"
        shown = [sanitize(item, depth=depth + 1, max_depth=max_depth) for item in items[:MAX_ITEMS]]
        if len(items) > MAX_ITEMS:
            shown.append(f"<{len(items) - MAX_ITEMS} more, {len(items)} items>")
        return shown
    return f"<{type(value).__name__}>"


@dataclass(frozen=True)
class RunEvent:
    """One run event; ``to_dict()`` is its JSONL line (``data`` is already sanitised)."""

    event: str
    run_id: str
    plan_id: str
    timestamp: str
    node_id: str | None = None
    data: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    def to_dict(self) -> dict[str, Any]:
        """``{"event", "run_id", "plan_id", "node_id"?, "timestamp", **data}``."""
        line: dict[str, Any] = {"event": self.event, "run_id": self.run_id, "plan_id": self.plan_id}
        if self.node_id is not None:
            line["node_id"] = self.node_id
        line["timestamp"] = self.timestamp
        line.update(self.data)
        return line


EventCallback = Callable[[RunEvent], None]


def safe_path_part(plan_id: str) -> Path:
    """``plan_id`` as a relative folder (``common/validation``, ``経理/月次`` keep theirs).

    Letters and digits of any script are kept (Japanese plan ids give readable,
    distinct folders); anything else that could be a path trick becomes ``_``.
    Runs are found by their run id, so the folder is only for people browsing.
    """
    parts = [re.sub(r"[^\w.\-]", "_", part) for part in plan_id.split("/")]
    parts = [part for part in parts if part.strip(".") not in ("",)]
    return Path(*parts) if parts else Path("_")


def log_path_for(
    runs_dir: Path, plan_id: str, run_id: str, moment: dt.datetime | None = None
) -> Path:
    """``runs_dir/{plan_id}/{20250101T100000Z}-{run_id}.jsonl``."""
    moment = (moment or dt.datetime.now(dt.UTC)).astimezone(dt.UTC)
    return runs_dir / safe_path_part(plan_id) / f"{moment:%Y%m%dT%H%M%SZ}-{run_id}.jsonl"


_ENCODER = json.JSONEncoder(ensure_ascii=False, default=str)
FLUSH_INTERVAL_S = 0.1
_FLUSH_AT_ONCE = frozenset(
    {"plan_start", "plan_resumed", "node_error", "node_waiting", "plan_paused", "plan_complete"}
)


class RunLog:
    """Appends sanitised events to a JSONL file (thread-safe) and forwards them.

    Lines reach the file at once for plan events, errors and waits, and otherwise
    at least every ``FLUSH_INTERVAL_S`` (a flush per node event would cost the
    scheduler more than the event); ``close()`` flushes everything.
    """

    def __init__(self, path: Path, *, on_event: EventCallback | None = None) -> None:
        self.path = path
        self._on_event = on_event
        self._lock = threading.Lock()
        path.parent.mkdir(parents=True, exist_ok=True)
        self._file = path.open("a", encoding="utf-8")
        self._flushed = time.monotonic()

    def emit(
        self, event: str, *, run_id: str, plan_id: str, node_id: str | None = None, **data: Any
    ) -> RunEvent:
        """Write one event line and call ``on_event`` with it, in log order.

        A failing callback is logged (``keiri_agent.plans.run.run_log``) and does not stop
        the run: observers must not change the outcome of a plan.
        """
        clean = MappingProxyType(sanitize(data, max_depth=MAX_DEPTH + 1))
        with self._lock:
            record = RunEvent(event, run_id, plan_id, utc_timestamp(), node_id, clean)
            if not self._file.closed:
                self._file.write(_ENCODER.encode(record.to_dict()) + "\n")
                now = time.monotonic()
                if event in _FLUSH_AT_ONCE or now - self._flushed >= FLUSH_INTERVAL_S:
                    self._file.flush()
                    self._flushed = now
            if self._on_event is not None:
                try:
                    self._on_event(record)
                except Exception:
                    _LOGGER.exception("on_event callback failed on %s", event)
        return record

    def close(self) -> None:
        """Close the file; later events still reach ``on_event`` but are not written."""
        with self._lock:
            self._file.close()

    def __enter__(self) -> RunLog:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


def read_events(path: Path) -> list[dict[str, Any]]:
    """Every event of a run log, in order.

    A torn last line (a process killed mid-write) is ignored; a bad line elsewhere
    raises ``ValueError`` naming its line number.
    """
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    events: list[dict[str, Any]] = []
    for number, line in enumerate(lines, start=1):
        try:
            events.append(json.loads(line))
        except json.JSONDecodeError as exc:
            if number == len(lines):
                break
            raise ValueError(f"{path}: line {number} is not JSON ({exc.msg})") from exc
    return events
