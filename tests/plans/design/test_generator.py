"""generate_plan, the dispatcher: compose with no LLM, offline compose, the uncovered
instruction, the LLM with and without the fallback switch, requirements from the model's
unresolved vars, and the Japanese usage errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from keiri_agent.config import Settings
from keiri_agent.errors import LLMError, UserInputError
from keiri_agent.llm.testing import ScriptedChatModel
from keiri_agent.plans.design.generator import (
    MAX_INSTRUCTION_CHARS,
    TEMPLATES_NOTE,
    generate_plan,
)
from keiri_agent.plans.design.models import DesignEngineOptions, GeneratedPlan
from keiri_agent.plans.design.templates import TemplateLibrary
from keiri_agent.plans.engine import PlanEngine

README_INSTRUCTION = "請求一覧.xlsx と入金明細.csv を請求番号で照合して、差異をExcelに出力"
UNCOVERED = "社員の誕生日にお祝いメールを送る"
SALES = "売上の Excel から金額 1,000 円以上の行を抜き出す"

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
        {"block": "excel.read_data", "purpose": "売上の Excel を読む"},
        {"block": "table.filter", "purpose": "しきい値以上の行を残す"},
    ],
    "questions": [
        {"var": "book", "question": "売上の Excel ファイルはどれですか？", "type": "file"}
    ],
}
WIRED: dict[str, Any] = {
    "id": "big_sales",
    "graph": [
        {
            "id": "read",
            "block": "excel.read_data",
            "in": {"workbook": "${vars.book}", "sheet": "売上"},
            "out": {"records": "rows"},
        },
        {
            "id": "big",
            "block": "table.filter",
            "in": {
                "records": "${read.rows}",
                "conditions": [{"col": "金額", "op": ">=", "value": "${vars.limit}"}],
            },
            "out": {"records": "rows"},
        },
    ],
    "questions": [{"var": "limit", "question": "しきい値はいくらですか？", "type": "number"}],
}


@pytest.fixture
def engine(tmp_path: Path) -> PlanEngine:
    return PlanEngine(Settings(home=tmp_path, provider="offline"), env={})


@pytest.fixture(scope="module")
def library() -> TemplateLibrary:
    return TemplateLibrary.load()


def generate(engine: PlanEngine, library: TemplateLibrary, instruction: str, **kw: Any) -> Any:
    return generate_plan(
        instruction,
        kw.pop("documents", None),
        engine.catalog,
        kw.pop("options", None),
        kw.pop("templates", None),
        kw.pop("apply_mode", "hint"),
        engine=engine,
        library=library,
        **kw,
    )


def assert_valid(result: GeneratedPlan) -> None:
    assert result.plan is not None
    assert result.report is not None and result.report.errors == [], result.report
    assert result.dry_run is not None and result.dry_run.ok, result.dry_run
    assert result.ok


def test_compose_of_two_bundled_templates_checks_and_dry_runs_without_llm(
    engine: PlanEngine, library: TemplateLibrary
) -> None:
    result = generate(
        engine,
        library,
        "入金明細を読む",
        templates=["upload_payments_workbook", "payments_read"],
        apply_mode="compose",
        plan_id="payments",
    )
    assert_valid(result)
    assert result.reasoning == "compose" and result.apply_mode == "compose"
    assert result.templates == ["upload_payments_workbook", "payments_read"]
    assert result.plan is not None and result.plan.id == "payments"
    nodes = {node.id: node for node in result.plan.graph}
    assert set(nodes) == {
        "upload_payments_workbook__upload_workbook",
        "payments_read__read_payments",
    }
    # the import is wired to the other template's export, not left as a var
    workbook = nodes["payments_read__read_payments"].inputs["workbook"]
    assert workbook == "${upload_payments_workbook__upload_workbook.collected.payments_workbook}"
    assert result.dry_run_seconds is not None and result.dry_run_seconds >= 0


def test_offline_readme_example_gives_a_valid_plan(
    engine: PlanEngine, library: TemplateLibrary
) -> None:
    result = generate(engine, library, README_INSTRUCTION)
    assert_valid(result)
    assert result.offline and result.reasoning.startswith("offline-rules")
    assert result.verdict == "ok" and result.coverage is not None and result.coverage.ok
    blocks = {node.block for node in result.plan.graph} if result.plan else set()
    assert {"csv.read", "excel.read_data", "table.reconcile", "excel.write"} <= blocks
    assert result.candidates, "the retrieved candidates are shown offline too"


def test_offline_with_selected_templates_composes_them_and_says_offline(
    engine: PlanEngine, library: TemplateLibrary
) -> None:
    result = generate(
        engine, library, SALES, templates=["upload_payments_workbook", "payments_read"]
    )
    # the selected templates read a workbook but filter nothing: a valid Plan that does
    # not do what was asked is never reported as a success
    assert result.report is not None and result.report.ok and result.dry_run is not None
    assert result.verdict == "incomplete" and not result.ok
    assert result.coverage is not None
    assert [item.requirement for item in result.coverage.missing] == ["step:s1"]
    assert result.offline and result.reasoning == "offline-compose: selected templates"
    assert TEMPLATES_NOTE in result.warnings


def test_offline_llm_only_ignores_the_selected_templates(
    engine: PlanEngine, library: TemplateLibrary
) -> None:
    result = generate(
        engine,
        library,
        README_INSTRUCTION,
        templates=["upload_payments_workbook", "payments_read"],
        apply_mode="llm-only",
    )
    assert result.offline and result.reasoning != "offline-compose: selected templates"
    assert result.apply_mode == "llm-only"


def test_uncovered_instruction_gives_no_plan_but_a_message_and_candidates(
    engine: PlanEngine, library: TemplateLibrary
) -> None:
    result = generate(engine, library, UNCOVERED)
    assert result.plan is None and result.yaml_text == "" and not result.ok
    assert result.offline and result.reasoning.startswith("offline:")
    assert result.verdict == "cannot_build"
    assert any("お祝いメールを送る" in gap.message for gap in result.gaps)
    assert result.candidates and result.requirements == []


def test_llm_failure_with_fallback_returns_a_valid_fallback_plan(
    engine: PlanEngine, library: TemplateLibrary
) -> None:
    model = ScriptedChatModel(["JSON は書けません", "やはり書けません"])
    result = generate(
        engine, library, SALES, model=model, options=DesignEngineOptions(fallback=True)
    )
    assert model.remaining == 0
    assert result.reasoning.startswith("fallback")
    assert_valid(result)
    assert any("安全な代替の Plan" in w for w in result.warnings)


def test_llm_failure_without_fallback_raises(engine: PlanEngine, library: TemplateLibrary) -> None:
    model = ScriptedChatModel(["JSON は書けません", "やはり書けません"])
    with pytest.raises(LLMError):
        generate(engine, library, SALES, model=model, options=DesignEngineOptions(fallback=False))


def test_requirements_come_from_the_unresolved_vars_with_the_models_questions(
    engine: PlanEngine, library: TemplateLibrary
) -> None:
    model = ScriptedChatModel([REQUIREMENTS, SKELETON, WIRED])
    result = generate(engine, library, SALES, model=model, apply_mode="llm-only")
    assert result.reasoning.startswith("structured")
    by_id = {requirement.id: requirement for requirement in result.requirements}
    # the var a file input reads is asked as that node's file, with the model's question
    assert set(by_id) >= {"read_workbook", "limit"} and "book" not in by_id
    assert by_id["read_workbook"].label == "売上の Excel ファイルはどれですか？"
    assert by_id["read_workbook"].type == "file"
    assert by_id["read_workbook"].target == "read.workbook"
    assert by_id["limit"].label == "しきい値はいくらですか？"
    assert by_id["limit"].type == "number"
    assert by_id["limit"].target == "vars.limit"


@pytest.mark.parametrize(
    ("instruction", "kw", "code", "words"),
    [
        ("", {}, "DESIGN_EMPTY_INSTRUCTION", "指示が空です"),
        ("  \n ", {}, "DESIGN_EMPTY_INSTRUCTION", "指示が空です"),
        ("あ" * (MAX_INSTRUCTION_CHARS + 1), {}, "DESIGN_INSTRUCTION_TOO_LONG", "長すぎます"),
        (SALES, {"apply_mode": "merge"}, "DESIGN_APPLY_MODE", "適用モード"),
        (SALES, {"apply_mode": "compose"}, "DESIGN_NO_TEMPLATES", "テンプレートを 1 つ以上"),
    ],
)
def test_usage_errors_are_japanese_user_input_errors(
    engine: PlanEngine,
    library: TemplateLibrary,
    instruction: str,
    kw: dict[str, Any],
    code: str,
    words: str,
) -> None:
    with pytest.raises(UserInputError) as raised:
        generate(engine, library, instruction, **kw)
    assert raised.value.code == code
    assert words in raised.value.message and raised.value.hint


def test_unknown_template_is_a_japanese_user_input_error(
    engine: PlanEngine, library: TemplateLibrary
) -> None:
    with pytest.raises(UserInputError) as raised:
        generate(engine, library, SALES, templates=["no_such_template"], apply_mode="compose")
    assert "no_such_template" in raised.value.message
    assert any("\u3040" <= char <= "\u30ff" for char in raised.value.message)


def test_an_instruction_of_exactly_the_limit_is_accepted(
    engine: PlanEngine, library: TemplateLibrary
) -> None:
    text = ("入金明細を読む。" * MAX_INSTRUCTION_CHARS)[:MAX_INSTRUCTION_CHARS]
    result = generate(
        engine, library, text, templates=["upload_payments_workbook"], apply_mode="compose"
    )
    assert result.plan is not None
