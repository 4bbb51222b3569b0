"""Plan generation as runs (``runs.design_kind``), executed by a process's run service:
the reference documents staged in the workspace and only named in the run's inputs,
the generator's events then the generation's JSON form as the result, a failed
generation failing the run with its error, a cancel asked meanwhile ending it
``cancelled``, and a process that stops meanwhile leaving the files for the process
that continues the run. Offline provider; the only model is a scripted one."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import BaseMessage

from keiri_agent.config import Settings
from keiri_agent.llm.testing import ScriptedChatModel, ScriptedReply
from keiri_agent.runs import design_kind
from keiri_agent.runs.records import Run
from keiri_agent.runs.service import new_run_id
from keiri_agent.services.container import Services
from keiri_agent.services.design import DesignRequest
from keiri_agent.services.staged_uploads import StagedUploads
from keiri_agent.workspace import Workspace

INSTRUCTION = "経費精算.csv から交際費が5,000円を超える明細を抽出してExcelに出力"
POLICY = "# 経費規程\n\n交際費は 1 件 5,000 円を超えるものを確認する。\n".encode()
BROKEN = ("社内規程.pdf", b"not a pdf")
# A scripted LLM design (as in tests/plans/design/test_llm_designer.py): the wiring
# answers with an unknown block and an unknown input key, the repair fixes both.
INSTRUCTION_LLM = "売上の Excel から金額 1,000 円以上の行を抜き出す"
PINNED = ["excel.read_data", "table.filter"]
READ = {
    "id": "read",
    "block": "excel.read_data",
    "in": {"workbook": "${vars.book}", "sheet": "売上"},
    "out": {"records": "rows"},
}
FILTER = {
    "id": "big",
    "block": "table.filter",
    "in": {"records": "${read.rows}", "conditions": [{"col": "金額", "op": ">=", "value": 1000}]},
    "out": {"records": "rows"},
}
BAD = {
    "id": "big_sales",
    "graph": [
        {**READ, "block": "excel.read"},
        {**FILTER, "in": {**FILTER["in"], "rows": "${read.rows}"}},
    ],
}
SCRIPT: list[ScriptedReply] = [
    {
        "inputs": [{"id": "in1", "format": "excel", "holds": "売上", "sheet": "売上"}],
        "steps": [
            {
                "id": "s1",
                "kind": "filter",
                "conditions": [{"column": "金額", "op": ">=", "value": 1000}],
            }
        ],
    },
    {
        "steps": [
            {"block": "excel.read_data", "purpose": "売上の Excel を読む", "ui": False},
            {"block": "table.filter", "purpose": "1,000 円以上の行を残す"},
        ],
    },
    BAD,
    "こちらです。\n```json\n" + json.dumps(BAD, ensure_ascii=False) + "\n```",
    {"id": "big_sales", "graph": [READ, FILTER]},
]

Factory = Callable[..., Services]


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(home=tmp_path, provider="offline", run_lease_s=1.0, run_heartbeat_s=0.2)


@pytest.fixture
def process(settings: Settings) -> Iterator[Factory]:
    """``process(model=None)`` → the services of a process (closed after the test),
    ``model`` its chat model."""
    built: list[Services] = []

    def build(model: ScriptedChatModel | None = None) -> Services:
        factory = None if model is None else (lambda _settings: model)
        services = Services(settings, model_factory=factory)
        built.append(services)
        return services

    yield build
    for services in built:
        services.close()


def _start(services: Services, request: DesignRequest) -> Run:
    run_id = new_run_id()
    staged = StagedUploads(Workspace.from_settings(services.settings))
    inputs = design_kind.design_inputs(run_id, request, staged)
    return services.runs.start(
        design_kind.KIND, subject="", title=request.instruction, inputs=inputs, run_id=run_id
    )


def _settled(services: Services, run_id: str, *, timeout_s: float = 60.0) -> Run:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        run = services.runs.require(run_id)
        if run.settled:
            return run
        time.sleep(0.05)
    raise AssertionError(f"run {run_id} did not settle: {services.runs.require(run_id).status}")


def _staged(settings: Settings, run_id: str) -> Path:
    return StagedUploads(Workspace.from_settings(settings)).folder / run_id


def test_an_offline_generation_with_documents_named_not_stored(
    settings: Settings, process: Factory
) -> None:
    services = process()
    request = DesignRequest(INSTRUCTION, documents=[("経費規程.md", POLICY), BROKEN])
    run = _start(services, request)

    assert run.inputs["documents"] == [
        {"name": "経費規程.md", "file": "000"},
        {"name": "社内規程.pdf", "file": "001"},
    ]
    stored = json.dumps(run.inputs, ensure_ascii=False)
    assert "交際費は" not in stored and "not a pdf" not in stored  # named, never the bytes
    final = _settled(services, run.run_id)

    assert final.status == "success", final.error
    result = final.result
    assert result is not None
    assert result["verdict"] == "needs_answers" and result["offline"] is True
    assert result["plan_id"] and "csv.read" in result["yaml"]
    assert result["seconds"] >= 0
    documents = {item["name"]: item for item in result["digest"]["documents"]}
    assert set(documents) == {"経費規程.md", "社内規程.pdf"}
    assert documents["社内規程.pdf"]["warnings"]  # the page says why it was not read
    assert not _staged(settings, run.run_id).exists()  # deleted once the run ended


def test_a_scripted_generation_emits_its_events_and_its_repairs(
    settings: Settings, process: Factory
) -> None:
    model = ScriptedChatModel(SCRIPT)
    services = process(model)
    run = _start(services, DesignRequest(INSTRUCTION_LLM, pinned=PINNED))
    final = _settled(services, run.run_id)

    assert final.status == "success", final.error
    assert model.remaining == 0
    events = services.runs.store.events_after(run.run_id, 0)
    assert {"stage", "attempt"} <= {event.kind for event in events}
    assert all(event.source == "design" for event in events)
    assert [event.seq for event in events] == list(range(1, len(events) + 1))
    result = final.result
    assert result is not None and result["offline"] is False
    assert [attempt["number"] for attempt in result["attempts"]] == [1, 2]
    assert result["attempts"][1]["changes"] == [
        {"node": "read", "change": "changed", "fields": ["block"]},
        {"node": "big", "change": "changed", "fields": ["in"]},
    ]
    assert result["plan_id"] == "big_sales"


def test_a_failed_generation_fails_the_run_with_its_error(
    settings: Settings, process: Factory
) -> None:
    services = process()
    request = DesignRequest(INSTRUCTION, documents=[("経費規程.md", POLICY)], apply_mode="compose")
    run = _start(services, request)
    final = _settled(services, run.run_id)

    assert final.status == "failed"
    assert final.error is not None
    assert "compose にはテンプレートを 1 つ以上選んでください" in final.error["message"]
    assert final.error["hint"]
    assert not _staged(settings, run.run_id).exists()


def _stopping(
    services: list[Services], stop: Callable[[Services, str], None]
) -> Callable[[list[BaseMessage], list[str]], ScriptedReply]:
    """A model that answers ``SCRIPT`` and calls ``stop(services[0], run id)`` at its
    third call (the wiring), while the generation is under way."""
    calls: list[int] = []

    def respond(messages: list[BaseMessage], tools: list[str]) -> ScriptedReply:
        calls.append(len(calls))
        if len(calls) == 3:
            (running,) = services[0].runs.store.find(kind=design_kind.KIND)
            stop(services[0], running.run_id)
        return SCRIPT[(len(calls) - 1) % len(SCRIPT)]

    return respond


def test_a_cancel_asked_while_generating_ends_the_run_cancelled(
    settings: Settings, process: Factory
) -> None:
    holder: list[Services] = []
    model = ScriptedChatModel(respond=_stopping(holder, lambda s, run_id: s.runs.cancel(run_id)))
    holder.append(process(model))
    services = holder[0]
    run = _start(services, DesignRequest(INSTRUCTION_LLM, documents=[("経費規程.md", POLICY)]))
    final = _settled(services, run.run_id)

    assert final.status == "cancelled"
    assert final.result is None
    assert not _staged(settings, run.run_id).exists()  # nobody continues it


def test_a_process_stopping_meanwhile_leaves_the_files_for_the_next(
    settings: Settings, process: Factory
) -> None:
    holder: list[Services] = []
    model = ScriptedChatModel(respond=_stopping(holder, lambda s, _run_id: s.runs.shutdown()))
    holder.append(process(model))
    stopping = holder[0]
    request = DesignRequest(INSTRUCTION, documents=[("経費規程.md", POLICY)])
    run = _start(stopping, request)

    deadline = time.monotonic() + 60
    while not any(
        e.kind == "run_requeued" for e in stopping.runs.store.events_after(run.run_id, 0)
    ):
        assert time.monotonic() < deadline, "the stopping process never gave the run back"
        time.sleep(0.05)
    assert stopping.runs.require(run.run_id).status == "queued"
    assert (_staged(settings, run.run_id) / "000").is_file()  # kept for the next attempt
    stopping.close()

    following = process()  # the next process (offline): its recovery continues the run
    following.process_runs.start()
    final = _settled(following, run.run_id)
    assert final.status == "success", final.error
    assert final.attempt == 2
    names = [item["name"] for item in (final.result or {})["digest"]["documents"]]
    assert names == ["経費規程.md"]
    assert not _staged(settings, run.run_id).exists()


def test_inputs_read_back_into_the_same_request(settings: Settings) -> None:
    staged = StagedUploads(Workspace.from_settings(settings))
    request = DesignRequest(
        INSTRUCTION,
        documents=[("経費規程.md", POLICY)],
        templates=["filter"],
        apply_mode="llm-only",
        pinned=PINNED,
        fallback=True,
        plan_id="expense_check",
        samples=[("経費.csv", "勘定科目,金額\n交際費,6000\n".encode())],
    )
    inputs: dict[str, Any] = design_kind.design_inputs("run_000000000001", request, staged)
    assert inputs["samples"] == [{"name": "経費.csv", "file": "001"}]
    manifest = [*inputs["documents"], *inputs["samples"]]
    uploads = staged.load("run_000000000001", manifest)
    assert design_kind.design_request(json.loads(json.dumps(inputs)), uploads) == request
