"""Accounting tasks named as a whole (issue 32 §6): 「入金消込をして」 and 「総合振込のファイル
を作って」 become the one block that does the job, with its files asked and its
parameters given or asked — and a keyed reconciliation stays a reconciliation.

The end-to-end tests generate offline as ``plan generate`` does, run the Plan on the
bundled sample files through the real runner and compare what comes out with the
block run directly on the same files (the wiring is what is tested here; the matching
itself is tested in tests/accounting and measured by benchmarks/payment_matching.py).
"""

from __future__ import annotations

import io
import logging
from pathlib import Path
from typing import Any

import openpyxl
import pytest
from pydantic import ValidationError

from keiri_agent.accounting.zengin_transfers import read_transfer_file
from keiri_agent.blocks.base import BlockContext
from keiri_agent.blocks.payment_matching import MatchPaymentsBlock
from keiri_agent.config import Settings
from keiri_agent.plans.design.procedure import StepSpec, checklist
from keiri_agent.plans.design.procedure_rules import read_procedure
from keiri_agent.plans.dsl.loader import load_plan_text
from keiri_agent.plans.run import PlanRunner
from keiri_agent.services.design import DesignRequest, DesignService

SAMPLES = Path(__file__).resolve().parents[3] / "src" / "keiri_agent" / "samples"
MATCHING = "銀行の入金明細と請求一覧で入金消込をして、仕訳案も作って"


def upload(folder: str, name: str) -> dict[str, Any]:
    return {"name": name, "data": (SAMPLES / folder / name).read_bytes()}


def test_payment_matching_is_one_task_with_three_files() -> None:
    procedure = read_procedure(MATCHING)
    assert not procedure.gaps
    assert [(s.kind, s.block) for s in procedure.steps] == [("task", "accounting.match_payments")]
    assert [(i.id, i.format, i.holds) for i in procedure.inputs] == [
        ("bank", "file", "銀行の入金明細"),
        ("invoices", "file", "請求一覧"),
        ("customers", "file", "取引先マスタ（得意先名・カナ・振込名義）"),  # not named: asked
    ]
    assert [o.format for o in procedure.outputs] == ["excel"]


def test_named_files_take_the_task_inputs() -> None:
    procedure = read_procedure(
        "入金明細.csv と 請求一覧.xlsx と 得意先マスタ.csv で入金消込して、結果はExcelで"
    )
    assert not procedure.gaps
    assert [(i.id, i.holds) for i in procedure.inputs] == [
        ("bank", "入金明細"),
        ("invoices", "請求一覧"),
        ("customers", "得意先マスタ"),
    ]


def test_a_reconciliation_on_named_keys_stays_a_reconciliation() -> None:
    procedure = read_procedure(
        "入金消込の件です。通帳.csv と 予定表.xlsx を取引先名で照合してください。Excelで"
    )
    assert [(s.kind, s.keys) for s in procedure.steps] == [("reconcile", ["取引先名"])]


def test_a_table_step_beside_a_task_is_said_not_built() -> None:
    procedure = read_procedure("通帳の入金と請求書で入金消込して。金額が10万円以上の入金だけ")
    assert [g.kind for g in procedure.gaps] == ["unsupported_action"]
    assert "入金消込と一緒には組み立てられません" in procedure.gaps[0].message


def test_transfer_file_reads_the_date_and_asks_the_remitter() -> None:
    procedure = read_procedure(
        "支払予定表.xlsx から全銀形式の振込データを作成して。振込指定日は2026年12月25日"
    )
    assert not procedure.gaps
    (step,) = procedure.steps
    assert step.block == "accounting.zengin_transfer"
    assert step.values == {"transfer_date": "2026-12-25"}
    assert "remitter.code" in step.missing and "transfer_date" not in step.missing
    assert [o.format for o in procedure.outputs] == ["file", "excel"]
    assert "総合振込ファイルの作成（振込指定日 「2026-12-25」）" in checklist(procedure)


@pytest.mark.parametrize(
    "instruction",
    [
        "給与振込データ.csvを部署別に振込額で合計して",  # a file read, not one made
        "勤怠集計.xlsxから給与振込データを作って",  # 給与振込 is another layout
        "買掛金の照合をして",
    ],
)
def test_words_that_are_not_the_tasks(instruction: str) -> None:
    assert all(step.kind != "task" for step in read_procedure(instruction).steps)


def test_a_task_step_must_name_a_known_block() -> None:
    with pytest.raises(ValidationError):
        StepSpec(id="s1", kind="task", block="shell.run")


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> DesignService:
    home = tmp_path_factory.mktemp("home")
    return DesignService(Settings(_env_file=None, provider="offline", home=home))  # type: ignore[call-arg]


def _run(service: DesignService, yaml_text: str, tmp: Path, **start: Any) -> Any:
    plan = load_plan_text(yaml_text)
    runner = PlanRunner(service.engine.catalog, Settings(_env_file=None), runs_dir=tmp, env={})  # type: ignore[call-arg]
    outcome = runner.start(plan, **start)
    assert outcome.status == "success", outcome.errors
    return plan, outcome


def test_payment_matching_generated_and_run_on_the_samples(
    service: DesignService, tmp_path: Path
) -> None:
    result = service.generate(DesignRequest(MATCHING)).result
    assert result.verdict == "ok", [g.message for g in result.gaps]
    assert result.coverage is not None and result.coverage.ok, result.coverage.lines()
    files = {
        "bank": upload("payment_matching", "入金明細.csv"),
        "invoices": upload("payment_matching", "請求一覧.csv"),
        "customers": upload("payment_matching", "取引先マスタ.csv"),
    }
    plan, outcome = _run(service, result.yaml_text, tmp_path, answers={"upload_files": files})
    node, alias = str(plan.exports[0].source).split(".", 1)
    book = openpyxl.load_workbook(io.BytesIO(outcome.outputs[node][alias]))
    assert book.sheetnames == ["消込結果", "要確認", "未入金請求", "仕訳案"]

    ctx = BlockContext("t", "t", "match", Settings(), logging.getLogger("t"))
    direct = MatchPaymentsBlock().run(dict(files), ctx)
    for sheet, port in [("消込結果", "matched"), ("要確認", "review"), ("仕訳案", "journal")]:
        rows = list(book[sheet].iter_rows(values_only=True))
        assert len(rows) - 1 == len(direct[port]) > 0, sheet


def test_transfer_file_generated_asks_then_runs_on_the_sample(
    service: DesignService, tmp_path: Path
) -> None:
    result = service.generate(DesignRequest("支払予定表から総合振込のファイルを作って")).result
    assert result.verdict == "needs_answers"
    asked = {question["var"]: question["question"] for question in result.questions}
    assert asked["s1_remitter_code"].startswith("委託者コード")
    assert "s1_transfer_date" not in asked  # optional: the table's 支払日 unless set
    values = {
        "s1_transfer_date": "2026-11-30",
        "s1_remitter_code": "1234567890",
        "s1_remitter_name": "カ）ケイリサンプル",
        "s1_remitter_bank_code": "0005",
        "s1_remitter_branch_code": "001",
        "s1_remitter_account_type": "当座",
        "s1_remitter_number": "7654321",
    }
    files = {"payments": upload("zengin_transfer", "支払予定表.csv")}
    plan, outcome = _run(
        service, result.yaml_text, tmp_path, vars=values, answers={"upload_files": files}
    )
    made = next(e for e in plan.exports if str(e.source).endswith(".file"))
    node, alias = str(made.source).split(".", 1)
    file = outcome.outputs[node][alias]
    assert file["name"] == "総合振込_20261130.txt"
    back = read_transfer_file(file["data"], year=2026)
    assert back.remitter.account.number == "7654321"
    assert back.total == 1_799_600  # rows 1–5 of the sample (tests/plans/test_example_zengin…)


def test_answers_to_a_tasks_questions_are_its_values() -> None:
    from keiri_agent.plans.design.coverage import check_coverage, resolved_vars
    from keiri_agent.plans.design.procedure_plan import answered, plan_from_procedure

    procedure = read_procedure("支払予定表から総合振込のファイルを作って")
    built = plan_from_procedure(procedure, plan_id="t")
    assert {item.status for item in check_coverage(procedure, built.plan).items} == {
        "covered",
        "waiting",
    }
    values = {"s1_remitter_code": "1234567890"}
    done = answered(procedure, built.questions, values)
    (step,) = done.steps
    assert step.values == {"remitter.code": "1234567890"}
    assert "remitter.code" not in step.missing and "remitter.name" in step.missing
    plan = {**built.plan, "vars": {**built.plan["vars"], **values}}
    coverage = check_coverage(done, resolved_vars(plan))
    assert coverage.ok and "waiting" in {item.status for item in coverage.items}
    every = {question["var"]: "x" for question in built.questions}
    done = answered(procedure, built.questions, every)
    plan = {**built.plan, "vars": {**built.plan["vars"], **every}}
    assert {item.status for item in check_coverage(done, resolved_vars(plan)).items} == {"covered"}
