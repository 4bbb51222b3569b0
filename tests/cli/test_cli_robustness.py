"""Bad files and folders given to the CLI are clear errors (never tracebacks); plan
outputs that are bytes are JSON-safe (base64) or written with --out."""

from __future__ import annotations

import base64
import io
import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
from openpyxl import load_workbook
from typer.testing import CliRunner

from keiri_agent.cli.app import app
from keiri_agent.demo import sample_evidence_zip

runner = CliRunner()
REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "designs" / "examples" / "sales_by_region.yaml"
EVIDENCE_PLAN = REPO / "src" / "keiri_agent" / "samples" / "plans" / "evidence_summary.yaml"
ASKING_PLAN = """
apiVersion: v1
id: approval
version: 0.1.0
graph:
  - id: ask
    block: ui.interactive_input
    in:
      mode: collect
      message: 名前を入力してください
      requirements:
        - {id: name, type: text, label: 名前}
    out: {collected_data: collected}
  - id: note
    block: text.template
    in:
      template: "こんにちは {name}"
      values: {name: "${ask.collected.name}"}
    out: {text: message}
"""


@pytest.fixture
def sales_csv(tmp_path: Path) -> Path:
    path = tmp_path / "sales.csv"
    frame = pd.DataFrame({"地域": ["関東", "近畿", "関東"], "売上": [100, 250, 300]})
    path.write_bytes(frame.to_csv(index=False).encode("cp932"))
    return path


def _clean_failure(result: object, *needles: str) -> None:
    exit_code = result.exit_code  # type: ignore[attr-defined]
    output = result.output  # type: ignore[attr-defined]
    exception = result.exception  # type: ignore[attr-defined]
    assert exit_code == 1, output
    assert exception is None or isinstance(exception, SystemExit), repr(exception)
    assert "エラー" in output and "Traceback" not in output
    for needle in needles:
        assert needle in output, output


# ------------------------------------------------------------------ analyze --spec


def test_spec_file_in_cp932_is_read(sales_csv: Path, tmp_path: Path) -> None:
    spec = tmp_path / "spec.json"
    spec.write_bytes(
        (
            '{"type": "analysis", "op": "share_ratio", "group_col": "地域", "value_col": "売上"}'
        ).encode("cp932")
    )
    result = runner.invoke(app, ["analyze", str(sales_csv), "--spec", str(spec), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["results"]


def test_spec_file_in_utf16_is_read(sales_csv: Path, tmp_path: Path) -> None:
    # Notepad's "Unicode" and Excel's "Unicode text" save UTF-16 with a BOM
    spec = tmp_path / "spec.json"
    text = '{"type": "analysis", "op": "share_ratio", "group_col": "地域", "value_col": "売上"}'
    spec.write_bytes(text.encode("utf-16"))
    result = runner.invoke(app, ["analyze", str(sales_csv), "--spec", str(spec), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["results"]


def test_binary_spec_file_is_refused_by_its_encoding(sales_csv: Path, tmp_path: Path) -> None:
    spec = tmp_path / "spec.json"
    spec.write_bytes(b'{"op": "share_ratio"}\x00\x00\x01\x02')
    result = runner.invoke(app, ["analyze", str(sales_csv), "--spec", str(spec)])
    _clean_failure(result, "UTF-8 で保存してください", "spec.json")


def test_spec_file_in_neither_utf8_nor_cp932_asks_for_utf8(sales_csv: Path, tmp_path: Path) -> None:
    spec = tmp_path / "spec.json"
    spec.write_bytes(b'{"op": "\x81\x7f\xff"}')
    result = runner.invoke(app, ["analyze", str(sales_csv), "--spec", str(spec)])
    _clean_failure(result, "UTF-8 で保存してください", "spec.json")


def test_spec_given_as_a_folder(sales_csv: Path, tmp_path: Path) -> None:
    result = runner.invoke(app, ["analyze", str(sales_csv), "--spec", str(tmp_path)])
    _clean_failure(result, "SPEC_ERROR", "フォルダ")


# ------------------------------------------------------------------ analyze --out


def test_out_being_a_file_is_refused_before_the_analysis(sales_csv: Path, tmp_path: Path) -> None:
    out = tmp_path / "not_a_folder"
    out.write_text("x", encoding="utf-8")
    result = runner.invoke(
        app, ["analyze", str(sales_csv), "売上の分布をヒストグラムで見せて", "--out", str(out)]
    )
    _clean_failure(result, "not_a_folder", "フォルダではありません")
    assert "レポート" not in result.stdout  # nothing ran
    assert out.read_text(encoding="utf-8") == "x"


def test_out_being_a_file_with_spec(sales_csv: Path, tmp_path: Path) -> None:
    out = tmp_path / "taken"
    out.write_text("x", encoding="utf-8")
    spec = tmp_path / "spec.json"
    spec.write_text('{"type": "analysis", "op": "dataset_overview"}', encoding="utf-8")
    result = runner.invoke(app, ["analyze", str(sales_csv), "--spec", str(spec), "--out", str(out)])
    _clean_failure(result, "フォルダではありません")


def test_a_write_failure_under_out_still_prints_the_reply(sales_csv: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "figures").write_text("in the way", encoding="utf-8")  # figures/ cannot be made
    result = runner.invoke(
        app,
        [
            "analyze",
            str(sales_csv),
            "売上の分布をヒストグラムで見せて",
            "--out",
            str(out),
            "--json",
        ],
    )
    _clean_failure(result, "書き込めません")
    assert json.loads(result.stdout)["reply"]


# ------------------------------------------------------------------ plan --inputs


def _asking_plan(tmp_path: Path) -> Path:
    plan = tmp_path / "approval.yaml"
    plan.write_text(ASKING_PLAN, encoding="utf-8")
    return plan


def test_inputs_file_in_cp932_is_read(tmp_path: Path) -> None:
    answers = tmp_path / "answers.yaml"
    answers.write_bytes("ask: {name: 山田}\n".encode("cp932"))
    result = runner.invoke(
        app, ["plan", "run", str(_asking_plan(tmp_path)), "--inputs", str(answers), "--json"]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["status"] == "success", data
    assert data["outputs"]["note"]["message"] == "こんにちは 山田"


def test_inputs_given_as_a_folder(tmp_path: Path) -> None:
    plan = _asking_plan(tmp_path)
    for command in (["plan", "run", str(plan)], ["plan", "resume", "run_x"]):
        result = runner.invoke(app, [*command, "--inputs", str(tmp_path), "--no-prompt"])
        _clean_failure(result, "フォルダ", str(tmp_path))


def test_inputs_in_an_unknown_encoding_ask_for_utf8(tmp_path: Path) -> None:
    answers = tmp_path / "answers.yaml"
    answers.write_bytes(b"ask: {name: \x81\x7f\xff}\n")
    result = runner.invoke(
        app, ["plan", "run", str(_asking_plan(tmp_path)), "--inputs", str(answers)]
    )
    _clean_failure(result, "UTF-8 で保存してください")


# ------------------------------------------------------------------ plan outputs as bytes


@pytest.fixture
def evidence(keiri_home: Path) -> tuple[Path, bytes]:
    plan = keiri_home / "evidence_summary.yaml"
    shutil.copy(EVIDENCE_PLAN, plan)
    data = sample_evidence_zip()
    (keiri_home / "ev.zip").write_bytes(data)
    return plan, data


def _check_workbook(data: bytes) -> None:
    sheet = load_workbook(io.BytesIO(data))["集計"]
    assert [sheet.cell(row=1, column=c).value for c in (1, 2, 3)] == [
        "グループ",
        "ファイル数",
        "文字数",
    ]


def test_plan_run_json_prints_bytes_as_base64(evidence: tuple[Path, bytes]) -> None:
    plan, zip_bytes = evidence
    result = runner.invoke(app, ["plan", "run", str(plan), "--prompt", "--json"], input="ev.zip\n")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["status"] == "success", data
    workbook = data["outputs"]["write_report"]["workbook"]
    assert set(workbook) == {"bytes", "base64"}
    decoded = base64.b64decode(workbook["base64"], validate=True)
    assert len(decoded) == workbook["bytes"]
    _check_workbook(decoded)
    upload = data["outputs"]["collect_zip"]["collected"]["evidence_zip"]
    assert upload["name"] == "ev.zip" and "data" not in upload
    assert base64.b64decode(upload["base64"], validate=True) == zip_bytes
    assert upload["bytes"] == len(zip_bytes)


def test_plan_run_out_writes_the_files(evidence: tuple[Path, bytes], keiri_home: Path) -> None:
    plan, zip_bytes = evidence
    out = keiri_home / "出力"
    result = runner.invoke(
        app, ["plan", "run", str(plan), "--prompt", "--json", "--out", str(out)], input="ev.zip\n"
    )
    assert result.exit_code == 0, result.output
    outputs = json.loads(result.stdout)["outputs"]
    workbook = outputs["write_report"]["workbook"]
    assert Path(workbook["path"]) == out / "write_report.workbook.xlsx"
    _check_workbook(Path(workbook["path"]).read_bytes())
    upload = outputs["collect_zip"]["collected"]["evidence_zip"]
    assert Path(upload["path"]) == out / "ev.zip"
    assert Path(upload["path"]).read_bytes() == zip_bytes
    assert "base64" not in result.stdout
    assert sorted(p.name for p in out.iterdir()) == ["ev.zip", "write_report.workbook.xlsx"]


def test_plan_run_out_human_output_lists_the_paths(
    evidence: tuple[Path, bytes], keiri_home: Path
) -> None:
    plan, _ = evidence
    out = keiri_home / "out"
    result = runner.invoke(
        app, ["plan", "run", str(plan), "--prompt", "--out", str(out)], input="ev.zip\n"
    )
    assert result.exit_code == 0, result.output
    assert "write_report.workbook" in result.stdout
    assert (out / "write_report.workbook.xlsx").is_file()


def test_plan_run_out_being_a_file_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "file"
    out.write_text("x", encoding="utf-8")
    result = runner.invoke(app, ["plan", "run", str(EXAMPLE), "--out", str(out)])
    _clean_failure(result, "フォルダではありません")
