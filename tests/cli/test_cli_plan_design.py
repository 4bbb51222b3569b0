"""``keiri-agent plan design``: generate, answer the open questions (answers file, the
terminal, choices from a sample file), judge again; exit codes by verdict."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from typer.testing import CliRunner

from keiri_agent.cli.app import app

runner = CliRunner()
INSTRUCTION = "経費精算.csv から交際費が5,000円を超える明細を抽出してExcelに出力"
SAMPLE = "日付,勘定科目,部門,金額\n2025/4/1,交際費,営業部,12000\n"


def test_answers_file_completes_the_plan(keiri_home: Path) -> None:
    answers = keiri_home / "answers.yaml"
    answers.write_text("s1_column_1: 勘定科目\ns1_column_2: 金額\n", encoding="utf-8")
    out = keiri_home / "plan.yaml"
    result = runner.invoke(
        app,
        ["plan", "design", "--instruction", INSTRUCTION, "--answers", str(answers),
         "--out", str(out), "--json"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["verdict"] == "ok" and data["coverage"]["ok"] is True
    plan = yaml.safe_load(out.read_text(encoding="utf-8"))
    assert plan["vars"] == {"s1_column_1": "勘定科目", "s1_column_2": "金額"}
    assert runner.invoke(app, ["plan", "validate", str(out)]).exit_code == 0


def test_without_answers_and_no_terminal_it_lists_the_questions_and_exits_3(
    keiri_home: Path,
) -> None:
    result = runner.invoke(app, ["plan", "design", "--instruction", INSTRUCTION, "--no-prompt"])
    assert result.exit_code == 3, result.output
    text = result.stdout.replace("\n", "")
    assert "決める必要がある項目" in text and "「交際費」と比べる" in text
    assert "質問に答えると完成します" in text


def test_terminal_answers_with_choices_from_the_sample(keiri_home: Path) -> None:
    sample = keiri_home / "見本.csv"
    sample.write_bytes(SAMPLE.encode("cp932"))
    result = runner.invoke(
        app,
        ["plan", "design", "--instruction", INSTRUCTION, "--sample", str(sample), "--prompt"],
        input="2\n4\n",  # the options are the sample's columns: 2 = 勘定科目, 4 = 金額
    )
    assert result.exit_code == 0, result.output
    assert "1. 日付" in result.stdout and "4. 金額" in result.stdout
    assert "「勘定科目」が「交際費」" in result.stdout.replace("\n", "")


def test_an_answer_outside_the_sample_columns_is_refused_in_japanese(keiri_home: Path) -> None:
    sample = keiri_home / "見本.csv"
    sample.write_bytes(SAMPLE.encode("cp932"))
    answers = keiri_home / "answers.yaml"
    answers.write_text("s1_column_1: 部署\n", encoding="utf-8")
    result = runner.invoke(
        app,
        ["plan", "design", "--instruction", INSTRUCTION, "--sample", str(sample),
         "--answers", str(answers)],
    )  # fmt: skip
    assert result.exit_code == 1
    assert "回答に使えない値があります" in result.output and "勘定科目" in result.output
    assert "Traceback" not in result.output


def test_a_part_that_cannot_be_built_exits_4(keiri_home: Path) -> None:
    result = runner.invoke(
        app, ["plan", "design", "--instruction", "経費.csv を部門別に金額を合計してメールで送信"]
    )
    assert result.exit_code == 4, result.output
    assert "作れない部分" in result.stdout


def test_a_missing_sample_file_is_a_clear_error(keiri_home: Path) -> None:
    result = runner.invoke(
        app, ["plan", "design", "--instruction", INSTRUCTION, "--sample", "無い.csv"]
    )
    assert result.exit_code == 1
    assert "見本のファイル 無い.csv が見つかりません" in result.output
