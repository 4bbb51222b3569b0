"""The fallback Plan validates, dry-runs, runs without side effects; the switch parses."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from keiri_agent.config import Settings
from keiri_agent.errors import UserInputError
from keiri_agent.plans.design.fallback import FALLBACK_NOTE, build_fallback_plan, fallback_enabled
from keiri_agent.plans.design.models import BlockCandidate
from keiri_agent.plans.dsl import load_plan_text
from keiri_agent.plans.engine import PlanEngine

INSTRUCTION = "請求書ZIPと入金明細Excelを照合して差異を出力 ${vars.x} {amount}"


def _candidate(block: str) -> BlockCandidate:
    return BlockCandidate(block, "excel", "", (), (), (), 0.5)


def test_fallback_plan_checks_and_dry_runs(tmp_path: Path) -> None:
    engine = PlanEngine(Settings(home=tmp_path))
    plan = build_fallback_plan(
        INSTRUCTION,
        candidates=[_candidate("excel.read_data"), "file.parse_zip_2tier", "table.filter"],
    )
    text = yaml.safe_dump(plan, allow_unicode=True, sort_keys=False)
    report = engine.check(text)
    assert report.ok, report.to_dict()
    assert report.warnings == []
    loaded = load_plan_text(text)
    assert engine.dry_run(loaded).ok
    fields = plan["graph"][0]["in"]["requirements"]
    assert [(f["id"], f.get("accept")) for f in fields] == [
        ("excel_read_data", ".xlsx,.xlsm"),
        ("file_parse_zip_2tier", ".zip"),
        ("note", None),
    ]
    assert plan["id"].startswith("fallback_")
    blocks = {node["block"] for node in plan["graph"]}
    assert all(not engine.catalog.resolve(block).side_effects for block in blocks)


def test_fallback_plan_runs_and_states_the_instruction(tmp_path: Path) -> None:
    engine = PlanEngine(Settings(home=tmp_path))
    plan = load_plan_text(yaml.safe_dump(build_fallback_plan(INSTRUCTION, plan_id="fb")))
    result = engine.run(plan, answers={"collect_inputs": {"note": "金額列は「金額」"}})
    assert result.status == "success", result.errors
    text = result.outputs["summary"]["summary"]
    assert text == f"指示: {INSTRUCTION}\n補足: 金額列は「金額」\n{FALLBACK_NOTE}"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        *[("1", True), ("TRUE", True), ("yes", True), (" Yes ", True), (True, True), (1, True)],
        *[("0", False), ("false", False), ("no", False), (None, False), (0, False)],
    ],
)
def test_fallback_enabled(value: object, expected: bool) -> None:
    assert fallback_enabled(value) is expected


def test_fallback_enabled_matches_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    for text in ("1", "true", "yes", "0", "no"):
        monkeypatch.setenv("KEIRI_AGENT_LLM_FALLBACK", text)
        assert Settings().design.llm_fallback is fallback_enabled(text)


def test_fallback_enabled_rejects_other_text_in_japanese() -> None:
    with pytest.raises(UserInputError) as caught:
        fallback_enabled("maybe")
    assert "フォールバック" in caught.value.message
