"""design_offline: templates chosen by the instruction, gaps closed, composed; never invented."""

from __future__ import annotations

import pytest
import yaml

from keiri_agent.config import Settings
from keiri_agent.plans.catalog import BlockCatalog
from keiri_agent.plans.design.offline import NOT_COVERED, design_offline
from keiri_agent.plans.design.templates import TemplateLibrary
from keiri_agent.plans.dsl import load_plan_text
from keiri_agent.plans.engine import PlanEngine

CATALOG = BlockCatalog.discover()
LIBRARY = TemplateLibrary.load()
ENGINE = PlanEngine(Settings(), env={})

# (instruction, the templates a correct offline design uses), written before tuning.
COVERED = [
    (
        "入金明細のExcelを読み込んで部門別に金額を集計する",
        {"upload_payments_workbook", "payments_read", "department_summary"},
    ),
    (
        "証跡ZIPの請求書から取引先と金額を抽出する",
        {"upload_evidence_zip", "evidence_zip_import", "invoice_extraction"},
    ),
    (
        "担当者の承認を得てから差異レポートをExcelに出力する",
        {"approval", "difference_report_excel"},
    ),
]


def checked(text: str) -> None:
    report = ENGINE.check(text)
    assert report.errors == [], [str(issue) for issue in report.errors]


@pytest.mark.parametrize(("instruction", "expected"), COVERED)
def test_covered_instructions_compose_a_valid_plan(instruction: str, expected: set[str]) -> None:
    design = design_offline(instruction, LIBRARY, CATALOG, plan_id="offline_plan")
    assert design.result is not None, design.message
    chosen = {c.template_id for c in design.chosen}
    # the instruction's own templates are chosen first; gap closing may add providers
    assert [c.template_id for c in design.chosen][: len(expected)] == sorted(
        expected, key=[c.template_id for c in design.chosen].index
    )
    assert expected <= chosen
    own = [c for c in design.chosen if c.template_id in expected]
    assert all(c.reason.startswith("指示に一致") for c in own)
    assert all(c.reason for c in design.chosen)
    assert "オフライン" in design.message
    plan = design.result.plan
    assert plan["id"] == "offline_plan"
    checked(yaml.safe_dump(plan, allow_unicode=True, sort_keys=False))


def test_read_and_aggregate_dry_runs_with_every_import_bound() -> None:
    design = design_offline(COVERED[0][0], LIBRARY, CATALOG)
    assert design.result is not None
    assert design.result.unbound == [] and design.result.conflicts == []
    text = yaml.safe_dump(design.result.plan, allow_unicode=True)
    assert ENGINE.dry_run(load_plan_text(text)).ok


def test_a_gap_is_closed_with_the_template_that_exports_it() -> None:
    design = design_offline("LLMで支払期日を抽出", LIBRARY, CATALOG)
    assert design.result is not None
    reasons = {c.template_id: c.reason for c in design.chosen}
    assert design.chosen[0].template_id == "invoice_extraction"
    assert [c.template_id for c in design.chosen] == [
        "invoice_extraction",
        "evidence_zip_import",
        "upload_evidence_zip",
    ]
    assert "入力 evidence を用意するため" in reasons["evidence_zip_import"]
    assert "入力 evidence_zip を用意するため" in reasons["upload_evidence_zip"]
    assert design.result.unbound == []


def test_the_difference_report_gets_its_differences_from_the_reconciliation() -> None:
    design = design_offline(COVERED[2][0], LIBRARY, CATALOG)
    assert design.result is not None
    reasons = {c.template_id: c.reason for c in design.chosen}
    assert "入力 differences を用意するため" in reasons["invoice_payment_reconcile"]
    assert design.result.unbound == [] and design.result.conflicts == []
    assert design.result.bindings["difference_report_excel.differences"].startswith(
        "${invoice_payment_reconcile__"
    )


def test_an_uncovered_instruction_gets_no_plan_and_a_clear_message() -> None:
    design = design_offline("来月の天気予報を調べてメールで送る", LIBRARY, CATALOG)
    assert design.result is None
    assert design.chosen == []
    assert design.message.startswith("この指示に合うテンプレートが見つかりませんでした")
    assert design.message == NOT_COVERED


def test_templates_whose_blocks_are_missing_are_left_out_and_named(tmp_path) -> None:
    folder = tmp_path / "templates" / "check"
    folder.mkdir(parents=True)
    (folder / "odd_check.yaml").write_text(
        yaml.safe_dump(
            {
                "id": "odd_check",
                "title": "不思議な照合チェック",
                "category": "check",
                "tags": ["不思議", "照合"],
                "graph_snippet": [{"id": "x", "block": "odd.block", "in": {}}],
            },
            allow_unicode=True,
        ),
        encoding="utf-8",
    )
    library = TemplateLibrary.load([tmp_path / "templates"])
    design = design_offline("不思議な照合チェックをする", library, CATALOG)
    assert design.result is None
    assert "不思議な照合チェック" in design.message
    assert any("odd_check" in note and "odd.block" in note for note in design.notes)


def test_readme_example_with_reconcile() -> None:
    if "table.reconcile" not in CATALOG.ids():
        pytest.skip("table.reconcile is not in the catalog yet")
    design = design_offline("請求書ZIPと入金明細Excelを照合して差異をExcelに出力", LIBRARY, CATALOG)
    assert design.result is not None
    assert {
        "invoice_payment_reconcile",
        "difference_report_excel",
        "invoice_extraction",
        "payments_read",
    } <= {c.template_id for c in design.chosen}
    checked(yaml.safe_dump(design.result.plan, allow_unicode=True))
