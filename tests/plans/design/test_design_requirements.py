"""build_requirements: the seed 003 §7 rules from a plan and from check issues."""

from __future__ import annotations

from pathlib import Path

import pytest

from keiri_agent.config import Settings
from keiri_agent.plans.design.models import Requirement
from keiri_agent.plans.design.requirements import (
    SCHEMA_TEMPLATES,
    build_requirements,
    readable_label,
)
from keiri_agent.plans.dsl import load_plan_text
from keiri_agent.plans.engine import PlanEngine

PLAN = """
apiVersion: v1
id: bank_check
version: 0.1.0
vars:
  amount_column: null
  tolerance: 0
graph:
  - id: read_bank
    block: excel.read_data
    in: {header: auto}
    out: {records: rows}
  - id: pick
    block: table.select
    in:
      records: ${read_bank.rows}
      columns: ["${vars.amount_column}", "${vars.date_column}"]
    out: {records: picked}
  - id: extract
    block: ai.process_llm
    in: {evidence_data: {files: []}, prompt: "${vars.amount_column}を抽出"}
    out: {results: extracted}
"""


def _ids(items: list[Requirement]) -> list[str]:
    return [item.id for item in items]


def test_plan_rules_in_order_and_deduplicated() -> None:
    found = build_requirements(PLAN)
    assert _ids(found) == [
        "read_bank_workbook",
        "read_bank_sheet",
        "read_bank_range",
        "amount_column",
        "date_column",
        "extract_output_schema",
    ]
    by_id = {item.id: item for item in found}
    workbook = by_id["read_bank_workbook"]
    assert (workbook.type, workbook.target, workbook.accept) == (
        "file",
        "read_bank.workbook",
        ".xlsx,.xlsm",
    )
    assert by_id["read_bank_sheet"].required is False
    assert by_id["read_bank_sheet"].target == "read_bank.sheet"
    column = by_id["amount_column"]
    assert (column.type, column.target) == ("text", "vars.amount_column")
    assert column.hint and "列名" in column.hint
    assert column.label == "金額列"
    schema = by_id["extract_output_schema"]
    assert schema.type == "enum"
    assert schema.options == ("請求書の項目", "領収書の項目", "契約書の項目", "自由記述の要約")
    assert set(schema.options) == set(SCHEMA_TEMPLATES)
    assert schema.to_field()["type"] == "select"


def test_same_result_from_a_plan_a_mapping_and_text() -> None:
    plan = load_plan_text(PLAN)
    from_model = build_requirements(plan)
    assert from_model == build_requirements(PLAN)
    assert _ids(from_model)[0] == "read_bank_workbook"


def test_var_questions_give_label_type_and_options() -> None:
    found = build_requirements(
        PLAN,
        var_questions={
            "amount_column": "入金明細の金額列はどれですか？",
            "date_column": {
                "question": "日付の列は？",
                "type": "select",
                "options": ["日付", "入金日"],
            },
        },
    )
    by_id = {item.id: item for item in found}
    assert by_id["amount_column"].label == "入金明細の金額列はどれですか？"
    assert by_id["date_column"].type == "select"
    assert by_id["date_column"].options == ("日付", "入金日")


def test_set_values_need_nothing() -> None:
    text = PLAN.replace("amount_column: null", "amount_column: 金額").replace(
        "in: {header: auto}", "in: {workbook: '${vars.book}', header: auto}"
    )
    found = build_requirements(text)
    # an unresolved var in a file input is asked as that node's file, not as text
    assert "book" not in _ids(found)
    assert "amount_column" not in _ids(found)
    assert "read_bank_workbook" in _ids(found)


def test_unparsable_yaml_gives_nothing() -> None:
    assert build_requirements("graph: [") == []


def test_from_check_issues(tmp_path: Path) -> None:
    engine = PlanEngine(Settings(home=tmp_path))
    report = engine.check(PLAN)
    found = build_requirements(report, catalog=engine.catalog)
    ids = _ids(found)
    assert "date_column" in ids  # undeclared var → UNKNOWN_REFERENCE
    assert "read_bank_workbook" in ids  # missing file input
    assert "extract_output_schema" in ids
    assert {item.type for item in found if item.id == "read_bank_workbook"} == {"file"}


@pytest.mark.parametrize(
    ("name", "label"),
    [("amount", "金額"), ("vendor_name", "取引先名"), ("xyz_q", "「xyz_q」の値")],
)
def test_readable_label(name: str, label: str) -> None:
    assert readable_label(name) == label


def test_a_var_feeding_a_block_input_is_labelled_by_the_contract_and_optional_if_it_is() -> None:
    catalog = PlanEngine(Settings(provider="offline"), env={}).catalog
    plan = {
        "vars": {"book_sheet": None, "limit": None},
        "graph": [
            {"id": "read", "block": "excel.read_data",
             "in": {"workbook": b"x", "sheet": "${vars.book_sheet}"}},
            {"id": "pick", "block": "table.filter",
             "in": {"records": "${read.records}",
                    "conditions": [{"col": "金額", "op": ">=", "value": "${vars.limit}"}]}},
        ],
    }  # fmt: skip
    by_id = {r.id: r for r in build_requirements(plan, catalog=catalog)}
    sheet = catalog.resolve("excel.read_data").input_schema("sheet")["description"]
    assert by_id["book_sheet"].label == sheet and by_id["book_sheet"].required is False
    assert "read" in (by_id["book_sheet"].description or "")
    # a var inside a structure (not a whole input) keeps its readable label and stays required
    assert by_id["limit"].required is True and by_id["limit"].label == "上限"


def test_the_requirement_model_knows_every_operator_of_the_filter_block() -> None:
    """A condition the model can state is one ``table.filter`` can run, and back."""
    from typing import get_args

    from keiri_agent.blocks.table import FILTER_OPS
    from keiri_agent.plans.design.procedure import OPERATOR_WORDS, Operator

    assert set(get_args(Operator)) == set(FILTER_OPS) == set(OPERATOR_WORDS)
