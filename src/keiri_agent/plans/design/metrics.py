"""Generation metrics (seed 003 ログ/監査): one JSONL record per Plan generation.

``record_generation(logs_dir, generation_record(...))`` appends one line to
``<workspace>/logs/design_generations.jsonl``; ``summarize_generations(path)`` reads
the last records back for the 設計 page's panel. A record holds::

    timestamp, plan_id, mode (structured | compose | fallback | offline-compose),
    apply_mode, offline, ok, attempts, repair_iterations,
    attempt_issues [{number, errors: {code: n}}], issues {errors: {code: n}, warnings: {...}},
    dry_run_seconds, total_seconds, blocks [ids in graph order], templates,
    candidate_count, tokens {prompt, completion} (null when unknown),
    instruction {chars, sha256}, documents [{chars, sha256}]

Never the text of the instruction or of a document (its length and a sha256 prefix
only); every value passes ``masking.mask_secrets``. A line is written with one
``write`` on a file opened for appending (and, where the platform has it, under an
exclusive ``flock``), so two processes never interleave lines. The file is created
owner-only (``0600``, the folder ``0700``), like every workspace file.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import statistics
from collections import Counter, deque
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from keiri_agent.masking import mask_secrets
from keiri_agent.plans.design.models import GeneratedPlan
from keiri_agent.plans.design.requirements import iter_nodes
from keiri_agent.private import private_dir, private_opener

METRICS_FILE = "design_generations.jsonl"
HASH_CHARS = 16

try:  # POSIX: lock the file while appending; elsewhere O_APPEND alone
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]


def fingerprint(text: str) -> dict[str, Any]:
    """``{chars, sha256}`` of a text (a prefix of its SHA-256), never the text."""
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    return {"chars": len(text), "sha256": digest[:HASH_CHARS]}


def generation_record(
    result: GeneratedPlan,
    *,
    instruction: str,
    documents: Sequence[str] = (),
    total_seconds: float,
    dry_run_seconds: float | None = None,
    tokens: Mapping[str, int | None] | None = None,
    plan_id: str | None = None,
    now: datetime | None = None,
) -> dict[str, Any]:
    """The metrics record of one generation (JSON-compatible, secrets masked)."""
    report = result.report
    issues = {
        "errors": dict(Counter(str(i.code) for i in report.errors)) if report else {},
        "warnings": dict(Counter(str(i.code) for i in report.warnings)) if report else {},
    }
    attempts = len(result.attempts) or 1
    record = {
        "timestamp": (now or datetime.now(UTC)).isoformat(timespec="seconds"),
        "plan_id": plan_id or (result.plan.id if result.plan is not None else None),
        "mode": (result.reasoning.split() or ["unknown"])[0].rstrip(":,."),
        "apply_mode": result.apply_mode,
        "offline": result.offline,
        "ok": result.ok,
        "verdict": result.verdict,
        "attempts": attempts,
        "repair_iterations": attempts - 1,
        "attempt_issues": [
            {"number": attempt.number, "errors": dict(attempt.error_codes)}
            for attempt in result.attempts
        ],
        "issues": issues,
        "dry_run_seconds": None if dry_run_seconds is None else round(dry_run_seconds, 3),
        "total_seconds": round(total_seconds, 3),
        "blocks": _blocks(result),
        "templates": list(result.templates),
        "candidate_count": len(result.candidates),
        "tokens": {
            "prompt": (tokens or {}).get("prompt"),
            "completion": (tokens or {}).get("completion"),
        },
        "instruction": fingerprint(instruction),
        "documents": [fingerprint(text) for text in documents],
    }
    masked: dict[str, Any] = mask_secrets(record)
    return masked


def _blocks(result: GeneratedPlan) -> list[str]:
    if result.plan is None:
        return []
    graph = result.plan.model_dump(by_alias=True, exclude_unset=True).get("graph")
    return [str(node["block"]).partition("@")[0] for node in iter_nodes(graph) if node.get("block")]


def record_generation(logs_dir: Path, record: Mapping[str, Any]) -> Path:
    """Append ``record`` as one line to ``logs_dir/design_generations.jsonl``."""
    path = private_dir(logs_dir) / METRICS_FILE
    line = (json.dumps(record, ensure_ascii=False, default=str) + "\n").encode("utf-8")
    descriptor = private_opener(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    try:
        if fcntl is not None:
            fcntl.flock(descriptor, fcntl.LOCK_EX)
        os.write(descriptor, line)
    finally:
        os.close(descriptor)  # closing releases the lock
    return path


def summarize_generations(path: Path, last: int = 200) -> dict[str, Any]:
    """The panel's numbers over the last ``last`` records; never raises.

    ``count``, ``failed``, ``error_rate`` (0..1, None without records),
    ``duration_median`` / ``duration_p90`` (seconds, nearest rank),
    ``dry_run_median``, ``blocks`` (block id → count, most used first), ``modes``
    and ``skipped`` (damaged lines, not counted).
    """
    records: deque[dict[str, Any]] = deque(maxlen=max(1, last))
    skipped = 0
    try:
        with path.open("r", encoding="utf-8", errors="replace") as handle:
            for line in handle:
                if not line.strip():
                    continue
                try:
                    item = json.loads(line)
                except ValueError:
                    skipped += 1
                    continue
                if isinstance(item, dict):
                    records.append(item)
                else:
                    skipped += 1
    except OSError:
        pass
    durations = _numbers(item.get("total_seconds") for item in records)
    dry_runs = _numbers(item.get("dry_run_seconds") for item in records)
    failed = sum(1 for item in records if item.get("ok") is not True)
    blocks: Counter[str] = Counter()
    for item in records:
        found = item.get("blocks")
        if isinstance(found, list):
            blocks.update(str(block) for block in found)
    return {
        "count": len(records),
        "failed": failed,
        "error_rate": failed / len(records) if records else None,
        "duration_median": statistics.median(durations) if durations else None,
        "duration_p90": _percentile(durations, 0.9),
        "dry_run_median": statistics.median(dry_runs) if dry_runs else None,
        "blocks": dict(blocks.most_common()),
        "modes": dict(Counter(str(item.get("mode")) for item in records).most_common()),
        "skipped": skipped,
    }


def _numbers(values: Iterable[Any]) -> list[float]:
    return [
        float(value)
        for value in values
        if isinstance(value, (int, float)) and not isinstance(value, bool)
    ]


def _percentile(values: Sequence[float], share: float) -> float | None:
    """Nearest-rank percentile."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]
