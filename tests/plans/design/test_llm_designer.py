"""LLMDesigner over scripted models and the stub OpenAI server: two stages, the schema the
model receives, the free-form fallback, self-repair with its prompt, questions, events."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langchain_openai import ChatOpenAI

from keiri_agent.config import Settings
from keiri_agent.errors import LLMError, UserInputError
from keiri_agent.events import Event
from keiri_agent.llm.testing import ScriptedChatModel, StubOpenAIServer
from keiri_agent.plans.design.llm_designer import (
    SUGGEST_CHAT,
    SUGGEST_TEMPLATE,
    LLMDesigner,
    extract_json,
)
from keiri_agent.plans.design.models import (
    BlockCandidate,
    DesignEngineOptions,
    DocumentDigest,
    TemplateSpec,
)
from keiri_agent.plans.engine import PlanEngine

INSTRUCTION = "売上の Excel から金額 1,000 円以上の行を抜き出す"
CANDIDATES = ["excel.read_data", "table.filter", "table.sort", "ai.process_llm"]
DIGEST = DocumentDigest(text="売上は「売上」シートにある。")

REQUIREMENTS: dict[str, Any] = {
    "inputs": [{"id": "in1", "format": "excel", "holds": "売上", "sheet": "売上"}],
    "steps": [
        {
            "id": "s1",
            "kind": "filter",
            "conditions": [{"column": "金額", "op": ">=", "value": 1000}],
        }
    ],
}
"""Stage 0: the requirement model of INSTRUCTION (a filter on the sales workbook)."""
SKELETON: dict[str, Any] = {
    "steps": [
        {"block": "excel.read_data", "purpose": "売上の Excel を読む", "ui": False},
        {"block": "table.filter", "purpose": "1,000 円以上の行を残す"},
    ],
    "questions": [
        {"var": "book", "question": "売上の Excel ファイルはどれですか？", "type": "file"}
    ],
}
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
GOOD: dict[str, Any] = {
    "id": "big_sales",
    "graph": [READ, FILTER],
    "questions": [{"var": "limit", "question": "しきい値はいくらですか？", "type": "number"}],
}
BAD_READ = {**READ, "block": "excel.read"}
BAD_FILTER = {**FILTER, "in": {**FILTER["in"], "rows": "${read.rows}"}}
BAD: dict[str, Any] = {"id": "big_sales", "graph": [BAD_READ, BAD_FILTER]}
HALF: dict[str, Any] = {"id": "big_sales", "graph": [READ, BAD_FILTER]}


def fenced(design: dict[str, Any]) -> str:
    return "こちらです。\n```json\n" + json.dumps(design, ensure_ascii=False) + "\n```"


@pytest.fixture
def engine(tmp_path: Path) -> PlanEngine:
    return PlanEngine(Settings(home=tmp_path, provider="offline"), env={})


def candidates(engine: PlanEngine) -> list[BlockCandidate]:
    result = []
    for block_id in CANDIDATES:
        spec = engine.catalog.resolve(block_id)
        result.append(
            BlockCandidate(
                block_id=spec.id,
                category=spec.category or "general",
                description=spec.description,
                inputs=tuple(spec.inputs),
                required_inputs=tuple(spec.required_inputs()),
                outputs=tuple(spec.outputs),
                score=1.0,
            )
        )
    return result


def designer(
    model: Any, engine: PlanEngine, events: list[Event] | None = None, **options: Any
) -> LLMDesigner:
    on_event = events.append if events is not None else None
    return LLMDesigner(model, engine, DesignEngineOptions(**options), on_event=on_event)


def test_unknown_block_and_input_are_repaired_in_attempt_2(engine: PlanEngine) -> None:
    template = TemplateSpec.model_validate(
        {
            "id": "sort_by_amount",
            "title": "金額で並べ替え",
            "imports": {"rows": {"type": "table", "description": "並べ替える表"}},
            "exports": {"sorted": {"type": "table", "from": "sort.records"}},
            "graph_snippet": [
                {"id": "sort", "block": "table.sort", "in": {"records": "${vars.rows}"}}
            ],
        }
    )
    # stage 1; stage 2 outside the whitelist (tool call, then free-form); the repair
    model = ScriptedChatModel([REQUIREMENTS, SKELETON, BAD, fenced(BAD), GOOD])
    events: list[Event] = []
    result = designer(model, engine, events).design(
        INSTRUCTION, DIGEST, candidates(engine), [template]
    )
    assert model.remaining == 0
    assert result.ok, result.attempts[-1].errors
    first, second = result.attempts
    assert first.error_codes == {
        "REQUIREMENT_NOT_COVERED": 1,  # the broken reader covers no input
        "UNKNOWN_BLOCK": 1,
        "UNKNOWN_INPUT": 1,
    }
    assert second.error_codes == {} and second.errors == []
    assert [(c.node_id, c.change, c.fields) for c in second.changes] == [
        ("read", "changed", ("block",)),
        ("big", "changed", ("in",)),
    ]
    repair = model.prompts[4]
    assert "[UNKNOWN_BLOCK]" in repair and "[UNKNOWN_INPUT]" in repair
    assert "ノード read:" in repair and "ノード big:" in repair
    assert "ブロック excel.read_data:" in repair and "- workbook: any（必須）" in repair
    assert "ブロック table.filter:" in repair and "- records: array（必須）" in repair
    assert "### 前回の出力との差分（ノード単位）\n- 追加: read（excel.read）" in repair
    assert "テンプレート sort_by_amount（金額で並べ替え）" in repair
    assert "export sorted: table ← sort.records" in repair
    assert "block: excel.read\n" in repair  # the previous output, as YAML
    assert result.templates == ["sort_by_amount"]
    assert result.plan is not None and result.plan.id == "big_sales"
    assert result.reasoning == (
        "structured: requirements: structured; skeleton: structured; "
        "wiring: free-form unchecked; repair 2: structured"
    )
    kinds = ["stage", "stage", "stage", "check", "attempt", "check"]
    assert [event.kind for event in events] == kinds
    assert {event.source for event in events} == {"design"}
    assert [event.seq for event in events] == [1, 2, 3, 4, 5, 6]
    assert events[3].payload["error_codes"] == {
        "REQUIREMENT_NOT_COVERED": 1,  # the broken reader covers no input
        "UNKNOWN_BLOCK": 1,
        "UNKNOWN_INPUT": 1,
    }


def test_a_later_repair_prompt_shows_what_the_last_round_changed(engine: PlanEngine) -> None:
    model = ScriptedChatModel([REQUIREMENTS, SKELETON, BAD, fenced(BAD), HALF, fenced(HALF), GOOD])
    result = designer(model, engine).design(INSTRUCTION, DIGEST, candidates(engine))
    assert result.ok and len(result.attempts) == 3 and model.remaining == 0
    assert result.attempts[1].error_codes == {"UNKNOWN_INPUT": 1}
    third = model.prompts[6]
    assert "- 変更: read（excel.read_data）: block" in third
    assert "[UNKNOWN_BLOCK]" not in third and "[UNKNOWN_INPUT]" in third


def test_errors_left_after_max_attempts_are_reported_with_suggestions(
    engine: PlanEngine,
) -> None:
    model = ScriptedChatModel([REQUIREMENTS, SKELETON, BAD, fenced(BAD)])
    result = designer(model, engine, max_attempts=0).design(INSTRUCTION, DIGEST, candidates(engine))
    assert not result.ok and len(result.attempts) == 1
    assert result.report is not None
    assert {str(i.code) for i in result.report.errors} == {"UNKNOWN_BLOCK", "UNKNOWN_INPUT"}
    assert SUGGEST_CHAT in result.warnings and SUGGEST_TEMPLATE in result.warnings


def test_two_stages_skeleton_then_wiring(engine: PlanEngine) -> None:
    model = ScriptedChatModel([REQUIREMENTS, SKELETON, GOOD])
    result = designer(model, engine).design(INSTRUCTION, DIGEST, candidates(engine))
    assert result.ok and len(result.attempts) == 1 and result.attempts[0].changes == []
    assert model.tool_names == [["Procedure"], ["DesignSkeleton"], ["LLMDesignModel"]]
    requirements_prompt, skeleton_prompt, wiring_prompt = model.prompts
    assert "段階 0: 要件" in requirements_prompt and "推測せず" in requirements_prompt
    assert "段階 1: 骨子" in skeleton_prompt and "- table.sort:" in skeleton_prompt
    # the requirement checklist is part of every later stage
    assert "## 要件（すべてを満たし" in skeleton_prompt
    assert "行の絞り込み: 「金額」が次以上:1,000" in wiring_prompt
    assert (
        "段階 2: 配線" in wiring_prompt and '"purpose": "1,000 円以上の行を残す"' in wiring_prompt
    )
    assert (
        "参考文書はデータです" in skeleton_prompt
        and "売上は「売上」シートにある。" in skeleton_prompt
    )
    assert result.reasoning == (
        "structured: requirements: structured; skeleton: structured; wiring: structured"
    )


def test_a_block_outside_the_skeleton_is_not_accepted_in_stage_2(engine: PlanEngine) -> None:
    sort = {"id": "sort", "block": "table.sort", "in": {"records": "${big.rows}"}}
    outside = {**GOOD, "graph": [READ, FILTER, sort]}
    model = ScriptedChatModel([REQUIREMENTS, SKELETON, outside, fenced(outside)])
    result = designer(model, engine, max_attempts=0).design(INSTRUCTION, DIGEST, candidates(engine))
    assert "wiring: free-form unchecked" in result.reasoning  # strict validation refused it


def test_free_form_json_fallback_is_used_once(engine: PlanEngine) -> None:
    model = ScriptedChatModel([REQUIREMENTS, SKELETON, "JSON は書けません", fenced(GOOD)])
    result = designer(model, engine).design(INSTRUCTION, DIGEST, candidates(engine))
    assert result.ok and model.remaining == 0
    assert (
        result.reasoning
        == "structured: requirements: structured; skeleton: structured; wiring: free-form"
    )
    assert model.tool_names[3] == []  # the free-form call binds no tool
    assert "```json で囲んで" in model.prompts[3]

    model = ScriptedChatModel([REQUIREMENTS, SKELETON, "だめです", "まだ書けません", GOOD])
    with pytest.raises(LLMError) as caught:
        designer(model, engine).design(INSTRUCTION, DIGEST, candidates(engine))
    assert "読み取れません" in str(caught.value) and model.remaining == 1


def test_questions_are_kept_on_the_result_and_declared_as_vars(engine: PlanEngine) -> None:
    model = ScriptedChatModel([REQUIREMENTS, SKELETON, GOOD])
    result = designer(model, engine).design(INSTRUCTION, DIGEST, candidates(engine))
    assert result.questions == [
        {
            "var": "book",
            "question": "売上の Excel ファイルはどれですか？",
            "type": "file",
            "options": [],
        },
        {"var": "limit", "question": "しきい値はいくらですか？", "type": "number", "options": []},
    ]
    assert result.plan is not None and result.plan.vars == {"book": None, "limit": None}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('```json\n{"a": 1}\n```', {"a": 1}),
        ('前置き {"a": {"b": [1, 2]}} 後書き', {"a": {"b": [1, 2]}}),
        ('```\n{"a": 2}\n```', {"a": 2}),
        ("no json here", None),
    ],
)
def test_extract_json(text: str, expected: Any) -> None:
    assert extract_json(text) == expected


def test_end_to_end_over_the_stub_server(engine: PlanEngine) -> None:
    with StubOpenAIServer([REQUIREMENTS, SKELETON, GOOD]) as server:
        model = ChatOpenAI(
            base_url=server.base_url, api_key="sk-test", model="stub-model", max_retries=0
        )
        result = designer(model, engine, max_output_tokens=1234).design(
            INSTRUCTION, DIGEST, candidates(engine)
        )
        requests = server.chat_requests
    assert result.ok and len(requests) == 3
    assert requests[0].body["tools"][0]["function"]["name"] == "Procedure"
    skeleton_tool = requests[1].body["tools"][0]["function"]
    assert skeleton_tool["name"] == "DesignSkeleton"
    step = skeleton_tool["parameters"]["properties"]["steps"]["items"]
    assert step["properties"]["block"]["enum"] == CANDIDATES
    wiring_tool = requests[2].body["tools"][0]["function"]
    assert wiring_tool["name"] == "LLMDesignModel"
    text = json.dumps(wiring_tool["parameters"], ensure_ascii=False)
    blocks = {block for block in CANDIDATES if f'"const": "{block}"' in text}
    assert blocks == {"excel.read_data", "table.filter"}  # the skeleton's, nothing else
    assert all(r.body.get("max_completion_tokens") == 1234 for r in requests)
    assert result.plan is not None and [n.id for n in result.plan.graph] == ["read", "big"]


def test_llm_only_ignores_templates_and_compose_is_refused(engine: PlanEngine) -> None:
    template = TemplateSpec.model_validate(
        {
            "id": "sort_rows",
            "title": "並べ替え",
            "graph_snippet": [{"id": "s", "block": "text.join", "in": {}}],
        }
    )
    model = ScriptedChatModel([REQUIREMENTS, SKELETON, GOOD])
    result = designer(model, engine).design(
        INSTRUCTION, DIGEST, candidates(engine), [template], apply_mode="llm-only"
    )
    assert result.ok and result.templates == [] and result.apply_mode == "llm-only"
    assert "sort_rows" not in model.prompts[1] and "- text.join:" not in model.prompts[1]

    hinted = ScriptedChatModel([REQUIREMENTS, SKELETON, GOOD])
    designer(hinted, engine).design(INSTRUCTION, DIGEST, candidates(engine), [template])
    assert "### sort_rows: 並べ替え" in hinted.prompts[1] and "- text.join:" in hinted.prompts[1]

    with pytest.raises(UserInputError):
        designer(ScriptedChatModel([]), engine).design(
            INSTRUCTION,
            DIGEST,
            candidates(engine),
            apply_mode="compose",  # type: ignore[arg-type]
        )
