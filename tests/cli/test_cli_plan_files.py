"""``keiri-agent plan run --file NAME=PATH``: a file handed to a Plan's var or to a
``ui.interactive_input`` file requirement, read as ``{name, data}`` within the upload
limit; each mistake is a Japanese error saying how to fix it."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from keiri_agent.cli.app import app

runner = CliRunner()

SALES = "地域,店舗,売上\n関東,新宿店,1200\n近畿,梅田店,800\n関東,大宮店,300\n"

SUMMARY = """
  - id: read
    block: csv.read
    in: {{file: "{source}"}}
    out: {{records: rows, summary: read_summary}}
  - id: by_region
    block: table.aggregate
    in: {{records: "${{read.rows}}", group_by: [地域], metrics: {{店舗: [count]}}}}
    out: {{records: regions}}
  - id: write
    block: csv.write
    in: {{records: "${{read.rows}}", encoding: utf-8}}
    out: {{csv: csv}}
exports:
  - {{from: read.read_summary, as: read_summary}}
  - {{from: by_region.regions, as: regions}}
  - {{from: write.csv, as: csv}}
"""

VAR_PLAN = (
    "apiVersion: v1\nid: sales_by_var\nversion: 1.0.0\n"
    "vars: {sales_csv: null}\ngraph:" + SUMMARY.format(source="${vars.sales_csv}")
)

ASKING_PLAN = (
    "apiVersion: v1\nid: sales_by_answer\nversion: 1.0.0\ngraph:\n"
    "  - id: ask\n"
    "    block: ui.interactive_input\n"
    "    in:\n"
    "      mode: collect\n"
    "      message: 売上の CSV を選んでください\n"
    "      requirements:\n"
    "        - {id: sales_csv, type: file, label: 売上 CSV, accept: .csv}\n"
    "        - {id: note, type: text, label: メモ, required: false}\n"
    "    out: {collected_data: collected}" + SUMMARY.format(source="${ask.collected.sales_csv}")
)


@pytest.fixture
def sales(keiri_home: Path) -> Path:
    """A CP932 (Shift_JIS) CSV as Excel saves it."""
    path = keiri_home / "売上.csv"
    path.write_bytes(SALES.encode("cp932"))
    return path


def plan_file(folder: Path, text: str, name: str = "plan.yaml") -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def run(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, ["plan", "run", *args, "--no-prompt"])
    return result.exit_code, result.stdout, result.stderr


def check_outputs(stdout: str) -> None:
    data = json.loads(stdout)
    assert data["status"] == "success", data
    exports = data["outputs"]
    assert exports["read"]["read_summary"] == {"rows": 3, "encoding": "cp932", "bom": False}
    assert exports["by_region"]["regions"] == [
        {"地域": "関東", "店舗_count": 2},
        {"地域": "近畿", "店舗_count": 1},
    ]
    written = base64.b64decode(exports["write"]["csv"]["base64"]).decode("utf-8")
    assert written == SALES.replace("\n", "\r\n")


def test_a_file_given_to_a_var_runs_the_plan(keiri_home: Path, sales: Path) -> None:
    plan = plan_file(keiri_home, VAR_PLAN)
    code, stdout, stderr = run(str(plan), "--file", f"sales_csv={sales}", "--json")
    assert code == 0, stderr
    check_outputs(stdout)


def test_a_file_answers_an_interactive_file_requirement(keiri_home: Path, sales: Path) -> None:
    plan = plan_file(keiri_home, ASKING_PLAN)
    code, stdout, stderr = run(str(plan), "--file", f"sales_csv={sales}", "--json")
    assert code == 0, stderr
    check_outputs(stdout)
    # without the file the run pauses and asks for it
    code, stdout, _ = run(str(plan), "--json")
    assert code == 0 and json.loads(stdout)["status"] == "paused"


def test_a_file_joins_the_other_answers_of_its_node(keiri_home: Path, sales: Path) -> None:
    plan = plan_file(keiri_home, ASKING_PLAN)
    answers = keiri_home / "answers.yaml"
    answers.write_text("ask: {note: 4 月分}\n", encoding="utf-8")
    code, stdout, stderr = run(
        str(plan), "--inputs", str(answers), "--file", f"sales_csv={sales}", "--json"
    )
    assert code == 0, stderr
    data = json.loads(stdout)
    assert data["outputs"]["ask"]["collected"]["note"] == "4 月分"
    assert data["outputs"]["ask"]["collected"]["sales_csv"]["name"] == "売上.csv"


def test_help_documents_the_option() -> None:
    result = runner.invoke(app, ["plan", "run", "--help"])
    assert result.exit_code == 0
    assert "--file" in result.stdout and "NAME=PATH" in result.stdout


@pytest.mark.parametrize(
    ("argument", "words", "code"),
    [
        ("sales_csv={home}/ない.csv", ["ない.csv", "見つかりません"], "FILE_NOT_FOUND"),
        ("sales_csv={home}", ["フォルダ", "ファイルのパス"], "FILE_IS_DIRECTORY"),
        ("sales={sales}", ["sales", "sales_csv"], "FILE_UNKNOWN_INPUT"),
    ],
    ids=["missing", "directory", "unknown-name"],
)
def test_file_mistakes_are_errors_with_a_fix(
    keiri_home: Path, sales: Path, argument: str, words: list[str], code: str
) -> None:
    plan = plan_file(keiri_home, VAR_PLAN)
    given = argument.format(home=keiri_home, sales=sales)
    exit_code, stdout, stderr = run(str(plan), "--file", given)
    assert exit_code == 1, stdout
    assert f"[{code}]" in stderr and "ヒント" in stderr
    for word in words:
        assert word in stderr
    assert "Traceback" not in stderr
    as_json = runner.invoke(app, ["plan", "run", str(plan), "--file", given, "--json"])
    assert json.loads(as_json.stdout)["error"]["code"] == code


def test_a_name_without_equals_is_a_usage_error(keiri_home: Path, sales: Path) -> None:
    plan = plan_file(keiri_home, VAR_PLAN)
    exit_code, _, stderr = run(str(plan), "--file", str(sales))
    assert exit_code == 2
    assert "--file" in stderr and "名前=パス" in stderr


def test_a_file_over_the_upload_limit_is_refused(
    keiri_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KEIRI_AGENT_MAX_UPLOAD_MB", "1")
    big = keiri_home / "big.csv"
    big.write_bytes(b"a,b\n" + b"1,2\n" * (2**20 // 4 + 1))
    plan = plan_file(keiri_home, VAR_PLAN)
    exit_code, _, stderr = run(str(plan), "--file", f"sales_csv={big}")
    assert exit_code == 1
    assert "[FILE_TOO_LARGE]" in stderr and "KEIRI_AGENT_MAX_UPLOAD_MB" in stderr


def test_an_unknown_name_lists_the_file_inputs_of_a_plan_without_any(
    keiri_home: Path, sales: Path
) -> None:
    plan = plan_file(
        keiri_home,
        "apiVersion: v1\nid: t\nversion: 1.0.0\n"
        "graph: [{id: a, block: text.template, in: {template: hi}}]\n"
        "exports: [{from: a.text, as: text}]\n",
    )
    exit_code, _, stderr = run(str(plan), "--file", f"x={sales}")
    assert exit_code == 1 and "[FILE_UNKNOWN_INPUT]" in stderr
    assert "ファイルを受け取る入力がありません" in stderr


def test_a_file_refused_by_the_requirements_accept(keiri_home: Path, sales: Path) -> None:
    text_file = keiri_home / "memo.txt"
    text_file.write_text("x", encoding="utf-8")
    plan = plan_file(keiri_home, ASKING_PLAN)
    exit_code, _, stderr = run(str(plan), "--file", f"sales_csv={text_file}")
    assert exit_code == 1 and "[FILE_NOT_ACCEPTED]" in stderr and ".csv" in stderr
