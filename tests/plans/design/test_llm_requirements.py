"""The LLM path end to end over the stub OpenAI server (issue 27): requirement model →
skeleton → wiring → coverage check → repair of a missing requirement; gaps stop it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain_openai import ChatOpenAI

from keiri_agent.config import Settings
from keiri_agent.llm.testing import StubOpenAIServer
from keiri_agent.plans.design.llm_designer import LLMDesigner
from keiri_agent.plans.design.models import BlockCandidate, DesignEngineOptions, DocumentDigest
from keiri_agent.plans.engine import PlanEngine
from keiri_agent.services.design import DesignRequest, DesignService

INSTRUCTION = "経費.csv の金額が5万円以上の行を、部門別に金額を合計してExcelに出力"
BLOCKS = ["csv.read", "table.filter", "table.aggregate", "excel.write", "table.sort"]
DIGEST = DocumentDigest(text="no documents provided")

REQUIREMENTS: dict[str, Any] = {
    "inputs": [{"id": "in1", "format": "csv", "holds": "経費"}],
    "steps": [
        {
            "id": "s1",
            "kind": "filter",
            "conditions": [{"column": "金額", "op": ">=", "value": 50000}],
        },
        {"id": "s2", "kind": "aggregate", "group_by": ["部門"], "metrics": {"金額": ["sum"]}},
    ],
    "outputs": [{"format": "excel"}],
}
SKELETON: dict[str, Any] = {
    "steps": [
        {"block": "csv.read", "purpose": "経費の CSV を読む"},
        {"block": "table.filter", "purpose": "5万円以上の行を残す"},
        {"block": "table.aggregate", "purpose": "部門別に合計する"},
        {"block": "excel.write", "purpose": "Excel に書く"},
    ],
    "questions": [{"var": "csv_file", "question": "経費の CSV はどれですか？", "type": "file"}],
}
READ = {
    "id": "read",
    "block": "csv.read",
    "in": {"file": "${vars.csv_file}"},
    "out": {"records": "rows"},
}
KEEP = {
    "id": "keep",
    "block": "table.filter",
    "in": {"records": "${read.rows}", "conditions": [{"col": "金額", "op": ">=", "value": 50000}]},
    "out": {"records": "rows"},
}
TOTAL = {
    "id": "total",
    "block": "table.aggregate",
    "in": {"records": "${keep.rows}", "group_by": ["部門"], "metrics": {"金額": ["sum"]}},
    "out": {"records": "rows"},
}


def write(source: str) -> dict[str, Any]:
    return {
        "id": "write",
        "block": "excel.write",
        "in": {
            "workbook": None,
            "data": source,
            "output_config": {"sheet": "結果", "create_sheet": True},
        },
        "out": {"workbook": "book"},
    }


# the wiring forgets the aggregation: the filtered rows are written as they are
FORGOT: dict[str, Any] = {"id": "dept_totals", "graph": [READ, KEEP, write("${keep.rows}")]}
FIXED: dict[str, Any] = {"id": "dept_totals", "graph": [READ, KEEP, TOTAL, write("${total.rows}")]}
SORTED_TOO: dict[str, Any] = {
    "id": "dept_totals",
    "graph": [
        READ,
        KEEP,
        TOTAL,
        {
            "id": "order",
            "block": "table.sort",
            "in": {"records": "${total.rows}", "by": ["金額_sum"]},
            "out": {"records": "rows"},
        },
        write("${total.rows}"),
    ],
}


@pytest.fixture
def engine(tmp_path: Path) -> PlanEngine:
    return PlanEngine(Settings(home=tmp_path, provider="offline"), env={})


def candidates(engine: PlanEngine, blocks: list[str] = BLOCKS) -> list[BlockCandidate]:
    specs = [engine.catalog.resolve(block) for block in blocks]
    return [
        BlockCandidate(
            block_id=spec.id,
            category=spec.category or "general",
            description=spec.description,
            inputs=tuple(spec.inputs),
            required_inputs=tuple(spec.required_inputs()),
            outputs=tuple(spec.outputs),
            score=1.0,
        )
        for spec in specs
    ]


def chat(server: StubOpenAIServer) -> ChatOpenAI:
    return ChatOpenAI(base_url=server.base_url, api_key="sk-test", model="stub", max_retries=0)


def test_a_missing_requirement_is_repaired(engine: PlanEngine) -> None:
    with StubOpenAIServer([REQUIREMENTS, SKELETON, FORGOT, FIXED]) as server:
        designer = LLMDesigner(chat(server), engine, DesignEngineOptions())
        result = designer.design(INSTRUCTION, DIGEST, candidates(engine))
        requests = server.chat_requests
    names = [request.body["tools"][0]["function"]["name"] for request in requests]
    assert names == ["Procedure", "DesignSkeleton", "LLMDesignModel", "LLMDesignModel"]
    # the checklist reaches the skeleton and the wiring
    skeleton_text = str(requests[1].body["messages"])
    assert "集計: 「部門」別に「金額」の合計" in skeleton_text
    first, second = result.attempts
    assert first.error_codes == {"REQUIREMENT_NOT_COVERED": 1}
    repair_text = str(requests[3].body["messages"])
    assert "要件「集計: 「部門」別に「金額」の合計」を満たしていません" in repair_text
    assert second.error_codes == {}
    assert result.coverage is not None and result.coverage.ok
    assert [item.node for item in result.coverage.items] == ["read", "keep", "total", "write"]
    assert result.verdict == "ok"


def test_a_node_no_requirement_needs_is_sent_back(engine: PlanEngine) -> None:
    skeleton = {
        **SKELETON,
        "steps": [*SKELETON["steps"], {"block": "table.sort", "purpose": "並べる"}],
    }
    with StubOpenAIServer([REQUIREMENTS, skeleton, SORTED_TOO, FIXED]) as server:
        designer = LLMDesigner(chat(server), engine, DesignEngineOptions())
        result = designer.design(INSTRUCTION, DIGEST, candidates(engine))
    assert result.attempts[0].error_codes == {"UNRELATED_NODE": 1}
    assert result.verdict == "ok"


def test_the_wrong_plan_is_never_ok_when_repairs_run_out(engine: PlanEngine) -> None:
    with StubOpenAIServer([REQUIREMENTS, SKELETON, FORGOT, FORGOT]) as server:
        designer = LLMDesigner(chat(server), engine, DesignEngineOptions(max_attempts=1))
        result = designer.design(INSTRUCTION, DIGEST, candidates(engine))
    assert result.report is not None and result.report.ok  # it validates …
    assert result.verdict == "incomplete"  # … but does not do what was asked
    assert [item.requirement for item in result.coverage.missing] == ["step:s2"]  # type: ignore[union-attr]


def test_gaps_from_the_model_stop_before_the_skeleton(tmp_path: Path) -> None:
    refused = {
        **REQUIREMENTS,
        "gaps": [
            {
                "kind": "unsupported_action",
                "message": "「経理部長にメールで送る」はできません",
                "source": "経理部長にメールで送る",
            }
        ],
    }
    with StubOpenAIServer([refused]) as server:
        settings = Settings(
            home=tmp_path,
            provider="openai-compatible",
            openai_api_base=server.base_url,
            openai_api_key="sk-test",
            model="stub",
        )
        generation = DesignService(settings).generate(
            DesignRequest(instruction=INSTRUCTION + "して、経理部長にメールで送る")
        )
        calls = len(server.chat_requests)
    result = generation.result
    assert calls == 1 and result.plan is None
    assert result.verdict == "cannot_build"
    assert [gap.source for gap in result.gaps] == ["経理部長にメールで送る"]


def test_a_task_from_the_model_is_covered_by_its_block(engine: PlanEngine) -> None:
    """「入金消込をして」 as the model writes it: one task step, its three files."""
    requirements = {
        "inputs": [
            {"id": "bank", "format": "file", "holds": "銀行の入金明細"},
            {"id": "invoices", "format": "file", "holds": "請求一覧"},
            {"id": "customers", "format": "file", "holds": "取引先マスタ"},
        ],
        "steps": [{"id": "s1", "kind": "task", "block": "accounting.match_payments"}],
        "outputs": [{"format": "excel"}],
    }
    skeleton = {
        "steps": [
            {"block": "accounting.match_payments", "purpose": "入金消込"},
            {"block": "excel.write", "purpose": "結果を Excel に"},
        ],
        "questions": [],
    }
    files = {"bank": "${vars.bank}", "invoices": "${vars.invoices}"}
    match = {
        "id": "match",
        "block": "accounting.match_payments",
        "in": {**files, "customers": "${vars.customers}"},
        "out": {"matched": "matched"},
    }
    plan = {
        "id": "matching",
        "vars": {"bank": None, "invoices": None, "customers": None},
        "graph": [match, write("${match.matched}")],
    }
    offered = candidates(engine, [*BLOCKS, "accounting.match_payments"])
    with StubOpenAIServer([requirements, skeleton, plan]) as server:
        designer = LLMDesigner(chat(server), engine, DesignEngineOptions())
        result = designer.design("銀行の入金明細と請求一覧で入金消込をして", DIGEST, offered)
        first_prompt = str(server.chat_requests[0].body["messages"])
    assert "入金消込 = accounting.match_payments" in first_prompt  # the model is told the tasks
    assert result.coverage is not None and result.coverage.ok, result.coverage.lines()
    assert [item.node for item in result.coverage.items] == ["match"] * 4 + ["write"]
