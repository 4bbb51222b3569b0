"""The sample plans in designs/: they validate, dry-run and run end to end.

invoice_reconciliation runs with the LLM answered by StubOpenAIServer (the real
client path) and by ScriptedChatModel;
examples/evidence_summary needs no LLM. All test data is built here.
"""

from __future__ import annotations

import io
import zipfile
from pathlib import Path
from typing import Any

import pytest
from openpyxl import Workbook, load_workbook
from openpyxl.styles import Font, PatternFill
from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.cidfonts import UnicodeCIDFont
from reportlab.pdfgen import canvas

from keiri_agent.config import Settings
from keiri_agent.llm.testing import ScriptedChatModel, StubOpenAIServer
from keiri_agent.plans.catalog.catalog import BlockCatalog
from keiri_agent.plans.check.dry_run import dry_run
from keiri_agent.plans.check.validator import PlanValidator
from keiri_agent.plans.dsl.loader import load_plan_file
from keiri_agent.plans.dsl.models import Plan
from keiri_agent.plans.run.runner import PlanRunner, RunResult

DESIGNS = Path(__file__).resolve().parents[2] / "designs"
SAMPLE_PLANS = Path(__file__).resolve().parents[2] / "src" / "keiri_agent" / "samples" / "plans"
PLANS = {
    "invoice_reconciliation": DESIGNS / "invoice_reconciliation.yaml",
    "examples/evidence_summary": SAMPLE_PLANS / "evidence_summary.yaml",
}
CATALOG = BlockCatalog.discover()
FONT = "HeiseiKakuGo-W5"
pdfmetrics.registerFont(UnicodeCIDFont(FONT))

HEADER = ["ファイル", "取引先", "請求書番号", "金額", "支払期日"]
HEADER_FILL = "FFDDEBF7"

# (path in the ZIP, lines of the PDF, what the stubbed LLM answers for it)
INVOICES: list[tuple[str, list[str], dict[str, Any]]] = [
    (
        "A商事/請求書_2025-01.pdf",
        [
            "請求書",
            "株式会社A商事",
            "請求書番号 INV-001",
            "ご請求金額 110,000円",
            "お支払期限 2025-02-28",
        ],
        {
            "vendor": "株式会社A商事",
            "invoice_number": "INV-001",
            "amount": 110000,
            "due_date": "2025-02-28",
        },
    ),
    (
        "B工業/請求書_0131.pdf",
        ["請求書", "B工業株式会社", "No. B-2025-017", "合計 33,000円", "支払期日 2025年3月10日"],
        {
            "vendor": "B工業株式会社",
            "invoice_number": "B-2025-017",
            "amount": 33000,
            "due_date": "2025-03-10",
        },
    ),
    (
        "B工業/請求書_0215.pdf",
        ["請求書", "B工業株式会社", "No. B-2025-031", "合計 5,500円"],
        {
            "vendor": "B工業株式会社",
            "invoice_number": "B-2025-031",
            "amount": 5500,
            "due_date": None,
        },
    ),
]


def make_pdf(pages: list[list[str]]) -> bytes:
    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer)
    for lines in pages:
        pdf.setFont(FONT, 12)  # showPage resets the font: set it on every page
        for i, line in enumerate(lines):
            pdf.drawString(72, 780 - 20 * i, line)
        pdf.showPage()
    pdf.save()
    return buffer.getvalue()


def make_zip(entries: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        for path, data in entries.items():
            zf.writestr(path, data)
    return buffer.getvalue()


def invoice_zip() -> bytes:
    return make_zip({path: make_pdf([lines]) for path, lines, _ in INVOICES})


def payments_workbook() -> bytes:
    wb = Workbook()
    ws = wb.active
    assert ws is not None
    ws.title = "支払予定"
    ws.append(HEADER)
    for cell in ws[1]:
        cell.font = Font(bold=True, color="FF1F3864")
        cell.fill = PatternFill("solid", fgColor=HEADER_FILL)
    ws.column_dimensions["B"].width = 28
    ws.freeze_panes = "A2"
    wb.create_sheet("メモ")["A1"] = "このシートは変更しない"
    buffer = io.BytesIO()
    wb.save(buffer)
    return buffer.getvalue()


def no_subflows(plan_id: str) -> Plan:
    raise AssertionError(f"the sample plans call no subflow (asked for {plan_id!r})")


def make_runner(tmp_path: Path, settings: Settings) -> PlanRunner:
    return PlanRunner(
        CATALOG, settings, runs_dir=tmp_path / "runs", plan_loader=no_subflows, env={}
    )


# --------------------------------------------------------------------------- static checks


@pytest.mark.parametrize("plan_id", sorted(PLANS))
def test_sample_plan_validates_and_dry_runs(plan_id: str) -> None:
    plan = load_plan_file(PLANS[plan_id])
    assert plan.id == plan_id

    report = PlanValidator(CATALOG, env={}).validate(plan)
    assert report.errors == [], report.errors

    result = dry_run(plan, CATALOG, env={})
    assert result.ok, result.problems


# --------------------------------------------------------------------------- invoice_reconciliation


def file_answer(form: str, name: str, data: bytes) -> Any:
    return data if form == "bytes" else {"name": name, "data": data}


def run_invoice_plan(tmp_path: Path, settings: Settings, form: str = "named") -> RunResult:
    """Start the plan, check it waits for its inputs, answer them; the finished run."""
    plan = load_plan_file(PLANS["invoice_reconciliation"])
    runner = make_runner(tmp_path, settings)
    # one call at a time, so the scripted replies meet the files in order
    paused = runner.start(plan, vars={"llm_max_concurrency": 1})
    assert paused.status == "paused", paused.errors
    assert [w["node_id"] for w in paused.waiting] == ["collect_inputs"]
    assert paused.outputs == {}
    return runner.resume(
        paused.run_id,
        answers={
            "collect_inputs": {
                "evidence_zip": file_answer(form, "請求書.zip", invoice_zip()),
                "workbook": file_answer(form, "支払予定.xlsx", payments_workbook()),
                "proceed": True,
            }
        },
    )


def assert_reconciled_workbook(result: RunResult) -> None:
    """The run succeeded and wrote every invoice into the formatted workbook, cell by cell."""
    assert result.status == "success", result.errors
    llm_summary = result.outputs["process_llm"]["llm_summary"]
    assert llm_summary["succeeded"] == len(INVOICES) and llm_summary["errors"] == []
    assert result.outputs["write_excel"]["write_summary"]["rows_written"] == len(INVOICES)

    wb = load_workbook(io.BytesIO(result.outputs["write_excel"]["workbook"]))
    assert wb.sheetnames == ["支払予定", "メモ"]
    ws = wb["支払予定"]
    assert ws.max_row == 1 + len(INVOICES)
    assert ws.max_column == len(HEADER)
    for col, title in enumerate(HEADER, start=1):
        assert ws.cell(row=1, column=col).value == title
    for row, (path, _, reply) in enumerate(INVOICES, start=2):
        assert ws.cell(row=row, column=1).value == path
        assert ws.cell(row=row, column=2).value == reply["vendor"]
        assert ws.cell(row=row, column=3).value == reply["invoice_number"]
        assert ws.cell(row=row, column=4).value == reply["amount"]
        due = ws.cell(row=row, column=5).value
        if reply["due_date"] is None:
            assert due is None
        else:
            # excel.write turns date strings into dates
            assert due is not None and due.date().isoformat() == reply["due_date"]

    # the original formatting survived
    for cell in ws[1]:
        assert cell.font.bold is True
        assert cell.font.color is not None and cell.font.color.rgb == "FF1F3864"
        assert cell.fill.fgColor.rgb == HEADER_FILL
    assert ws.column_dimensions["B"].width == 28
    assert ws.freeze_panes == "A2"
    assert wb["メモ"]["A1"].value == "このシートは変更しない"


@pytest.mark.parametrize("form", ["bytes", "named"])
def test_invoice_reconciliation_end_to_end_with_a_stubbed_llm(tmp_path: Path, form: str) -> None:
    with StubOpenAIServer([reply for _, _, reply in INVOICES]) as server:
        settings = Settings(
            provider="openai-compatible",
            openai_api_base=server.base_url,
            model="stub-model",
            max_retries=0,
        )
        result = run_invoice_plan(tmp_path, settings, form)
        requests = server.chat_requests

    assert len(requests) == len(INVOICES)
    # every request carried its own invoice's text, extracted from the PDF
    for request, (_, lines, _) in zip(requests, INVOICES, strict=True):
        prompt = request.body["messages"][-1]["content"]
        assert lines[1] in prompt and lines[2].split()[-1] in prompt, prompt
    assert_reconciled_workbook(result)


def test_invoice_reconciliation_end_to_end_with_the_scripted_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = ScriptedChatModel([reply for _, _, reply in INVOICES])
    # ai.process_llm builds its model with keiri_agent.blocks.llm.chat_model(settings)
    monkeypatch.setattr("keiri_agent.blocks.llm.chat_model", lambda _settings: model)

    result = run_invoice_plan(tmp_path, Settings(provider="offline"))

    assert model.remaining == 0 and len(model.calls) == len(INVOICES)
    for prompt, (_, lines, _) in zip(model.prompts, INVOICES, strict=True):
        assert lines[1] in prompt and lines[2].split()[-1] in prompt, prompt
    assert_reconciled_workbook(result)


# --------------------------------------------------------------------------- evidence_summary


def test_evidence_summary_end_to_end_without_an_llm(tmp_path: Path) -> None:
    plan = load_plan_file(PLANS["examples/evidence_summary"])
    texts = {
        "A社/請求書.txt": "請求金額 12,000円",
        "A社/メモ.md": "# 打合せメモ\n\n支払は月末締め翌月末払い",
        "B社/領収書.txt": "領収書 B社 5,500円",
        "B社/明細.csv": "品目,金額\n用紙,3000\nトナー,2500",
        "C社/注文書.txt": "注文書",
    }
    zip_bytes = make_zip({path: text.encode() for path, text in texts.items()})
    expected: dict[str, tuple[int, int]] = {}
    for path, text in texts.items():
        group = path.split("/", 1)[0]
        count, chars = expected.get(group, (0, 0))
        expected[group] = (count + 1, chars + len(text))

    runner = make_runner(tmp_path, Settings(provider="offline"))
    paused = runner.start(plan)
    assert paused.status == "paused", paused.errors
    assert [w["node_id"] for w in paused.waiting] == ["collect_zip"]

    result = runner.resume(
        paused.run_id,
        answers={"collect_zip": {"evidence_zip": zip_bytes}},
    )

    assert result.status == "success", result.errors
    evidence = result.outputs["parse_evidence"]["evidence"]
    assert all(f["error"] is None and not f["truncated"] for f in evidence["files"])
    summary = result.outputs["write_report"]["write_summary"]
    assert summary["sheet"] == "集計" and summary["rows_written"] == len(expected)

    wb = load_workbook(io.BytesIO(result.outputs["write_report"]["workbook"]))
    ws = wb["集計"]
    assert [ws.cell(row=1, column=c).value for c in (1, 2, 3)] == [
        "グループ",
        "ファイル数",
        "文字数",
    ]
    assert ws.max_row == 1 + len(expected) and ws.max_column == 3
    for row, group in enumerate(sorted(expected), start=2):
        count, chars = expected[group]
        assert ws.cell(row=row, column=1).value == group
        assert ws.cell(row=row, column=2).value == count
        assert ws.cell(row=row, column=3).value == chars
