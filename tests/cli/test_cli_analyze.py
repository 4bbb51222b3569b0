"""The ``keiri-agent`` command line: analyze (question and --spec), demo, exit codes."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import openpyxl
import pandas as pd
import pytest
from typer.testing import CliRunner

from keiri_agent.cli.app import app
from keiri_agent.config import Settings
from keiri_agent.demo import sample_data_path
from keiri_agent.plans.engine import PlanEngine

runner = CliRunner()


@pytest.fixture
def sales_csv(tmp_path: Path) -> Path:
    path = tmp_path / "売上.csv"
    frame = pd.DataFrame(
        {
            "日付": ["2025-01-05", "2025-01-20", "2025-02-03", "2025-02-14"],
            "地域": ["関東", "近畿", "関東", "九州"],
            "売上": [100, 250, 300, 80],
            "数量": [1, 2, 3, 1],
        }
    )
    path.write_bytes(frame.to_csv(index=False).encode("cp932"))
    return path


def test_question_with_json_returns_records_and_report(sales_csv: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = runner.invoke(
        app, ["analyze", str(sales_csv), "地域別の売上の合計を見せて", "--json", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["offline"] is True
    assert data["next_action"] == "finalize"
    table = next(a for a in data["artifacts"] if a["kind"] == "table")
    assert {r["地域"]: r["売上_sum"] for r in table["records"]} == {
        "関東": 400,
        "近畿": 250,
        "九州": 80,
    }
    assert (out / "report.md").read_text(encoding="utf-8") == data["report_md"]


def test_plot_question_writes_png_next_to_the_report(sales_csv: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = runner.invoke(
        app, ["analyze", str(sales_csv), "売上の分布をヒストグラムで", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    figures = list((out / "figures").glob("*.png"))
    assert figures and figures[0].read_bytes().startswith(b"\x89PNG")
    report = (out / "report.md").read_text(encoding="utf-8")
    assert f"figures/{figures[0].name}" in report


def test_ask_then_answer_on_the_same_thread(sales_csv: Path) -> None:
    first = runner.invoke(app, ["analyze", str(sales_csv), "地域別に集計して", "--json"])
    assert first.exit_code == 0, first.output
    asked = json.loads(first.stdout)
    assert asked["next_action"] == "ask" and asked["questions"]
    second = runner.invoke(
        app,
        ["analyze", str(sales_csv), "売上の平均", "--thread", asked["thread_id"], "--json"],
    )
    assert second.exit_code == 0, second.output
    answered = json.loads(second.stdout)
    spec = answered["actions"][0]["spec"]
    assert spec["op"] == "groupby_agg" and spec["metrics"] == {"売上": ["mean"]}


def test_spec_file_reproduces_a_result(sales_csv: Path, tmp_path: Path) -> None:
    specs = tmp_path / "specs.json"
    specs.write_text(
        json.dumps(
            [
                {"type": "analysis", "op": "share_ratio", "group_col": "地域", "value_col": "売上"},
                {"type": "plot", "kind": "bar", "x": "地域", "y": "売上"},
            ],
            ensure_ascii=False,
        ),
        encoding="utf-8",
    )
    result = runner.invoke(app, ["analyze", str(sales_csv), "--spec", str(specs), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    share = data["results"][0]["artifacts"][0]
    assert share["records"][0]["地域"] == "関東"
    assert share["records"][0]["構成比"] == pytest.approx(400 / 730)
    (figure,) = [a for a in data["results"][1]["artifacts"] if a["kind"] == "figure"]
    assert figure["media_type"] == "image/png"  # bytes as everywhere: {"bytes", "base64"}
    assert base64.b64decode(figure["base64"]).startswith(b"\x89PNG")
    assert len(base64.b64decode(figure["base64"])) == figure["bytes"]


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"type": "analysis", "op": "pivot"}, "指定できるもの: total, dataset_overview"),
        ({"type": "plot", "kind": "hist", "x": "売り上げ"}, "もしかして '売上' ですか"),
        ("not json", "JSON として読めません"),
    ],
)
def test_bad_spec_is_a_reported_failure(
    sales_csv: Path, tmp_path: Path, spec: object, message: str
) -> None:
    path = tmp_path / "bad.json"
    path.write_text(spec if isinstance(spec, str) else json.dumps(spec), encoding="utf-8")
    result = runner.invoke(app, ["analyze", str(sales_csv), "--spec", str(path)])
    assert result.exit_code == 1
    assert message in result.output


def test_missing_and_empty_files_are_reported(tmp_path: Path) -> None:
    missing = runner.invoke(app, ["analyze", str(tmp_path / "nope.csv"), "概要"])
    assert missing.exit_code == 1
    empty = tmp_path / "empty.csv"
    empty.write_bytes(b"")
    result = runner.invoke(app, ["analyze", str(empty), "概要"])
    assert result.exit_code == 1
    assert "エラー" in result.output


def test_question_and_spec_together_is_a_usage_error(sales_csv: Path, tmp_path: Path) -> None:
    result = runner.invoke(
        app, ["analyze", str(sales_csv), "概要", "--spec", str(tmp_path / "s.json")]
    )
    assert result.exit_code == 2


def test_demo_ends_with_a_report_covering_three_ops_and_two_plot_kinds(tmp_path: Path) -> None:
    out = tmp_path / "demo"
    result = runner.invoke(app, ["demo", "--out", str(out)])
    assert result.exit_code == 0, result.output
    report = (out / "report.md").read_text(encoding="utf-8")
    ops = {
        op for op in ("dataset_overview", "groupby_agg", "share_ratio") if f'"op": "{op}"' in report
    }
    kinds = {kind for kind in ("hist", "line") if f'"kind": "{kind}"' in report}
    assert len(ops) == 3 and len(kinds) == 2
    for heading in ("## 結論", "## 根拠", "## 再現要約"):
        assert heading in report
    assert len(list((out / "figures").glob("*.png"))) == 2
    assert sample_data_path().exists()
    # Part 2: the sample Plan summarised the bundled evidence ZIP into a workbook.
    sheet = openpyxl.load_workbook(out / "evidence_summary.xlsx")["集計"]
    rows = list(sheet.iter_rows(values_only=True))
    assert rows[0] == ("グループ", "ファイル数", "文字数")
    assert {row[0]: row[1] for row in rows[1:]} == {"契約書": 1, "請求書": 2, "領収書": 2}
    # Part 3: the HelpDesk answered the README's question from the sample manual, with sources.
    answer = (out / "helpdesk_answer.md").read_text(encoding="utf-8")
    assert "オフラインモード" in answer and "### 出典" in answer
    assert "2.5 アカウントロックの解除" in answer and "12文字以上" in answer
    # Part 4: the README's instruction became a Plan that checks (offline: composed templates).
    generated = (out / "generated_plan.yaml").read_text(encoding="utf-8")
    report_ = PlanEngine(Settings(home=tmp_path, provider="offline"), env={}).check(generated)
    assert report_.ok and "table.reconcile" in generated
    # Part 5: the README's research question answered from the bundled corpus, with sources.
    research = (out / "research_report.md").read_text(encoding="utf-8")
    assert "調査レポート（オフライン）" in research and "## 出典" in research
    assert "登録番号" in research


def test_progress_lines_follow_the_analysis_events(sales_csv: Path) -> None:
    result = runner.invoke(app, ["analyze", str(sales_csv), "地域別の売上の合計を見せて"])
    assert result.exit_code == 0, result.output
    progress = [line for line in result.stderr.splitlines() if line.startswith("· ")]
    assert progress[0].startswith("· 判断（実行） ")
    # the act line says what was made, in words (not the spec's JSON)
    assert any(line.startswith("· 実行 「地域別の集計」") for line in progress), progress
    assert not any("{" in line or "groupby_agg" in line for line in progress), progress
    assert progress[-1].rstrip() == "· レポート"


def test_a_table_description_is_printed_whole_beneath_the_table(sales_csv: Path) -> None:
    result = runner.invoke(app, ["analyze", str(sales_csv), "地域別の売上の合計を見せて"])
    assert result.exit_code == 0, result.output
    # one line, not wrapped to the narrow table's width as a caption would be
    assert any(
        line.startswith("地域ごとの") and line.rstrip().endswith("行。")
        for line in result.stdout.splitlines()
    ), result.stdout


def test_total_row_is_excluded_noted_and_kept_with_a_flag(tmp_path: Path) -> None:
    # a clinic's visits by ward (another domain); the 合計 row leaves the ward blank,
    # which made it a group (欠損) that was "the largest"
    path = tmp_path / "visits.csv"
    path.write_text("病棟,診療科,受診数\n東,内科,30\n西,外科,20\n東,眼科,10\n,合計,60\n")
    question = "病棟別に受診数を集計して"
    result = runner.invoke(app, ["analyze", str(path), question, "--json"])
    assert result.exit_code == 0, result.output
    table = next(a for a in json.loads(result.stdout)["artifacts"] if a["kind"] == "table")
    assert {r["病棟"]: r["受診数_sum"] for r in table["records"]} == {"東": 40, "西": 20}
    shown = runner.invoke(app, ["analyze", str(path), question])
    assert "合計行を 1 行除外しました（5 行目）" in shown.stderr
    kept = runner.invoke(app, ["analyze", str(path), question, "--json", "--keep-total-rows"])
    table = next(a for a in json.loads(kept.stdout)["artifacts"] if a["kind"] == "table")
    assert sum(r["受診数_sum"] for r in table["records"]) == 120


def test_progress_prints_a_rationale_with_brackets_as_written(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """An LLM's rationale (or the user's words in it) is text, not Rich markup."""
    from keiri_agent.cli.app import _progress_printer
    from keiri_agent.events import EventEmitter

    emitter = EventEmitter("analysis", "turn_x", _progress_printer(quiet=False))
    rationale = "[/red]の列と [bold]売上[/bold] を集計します"
    emitter.emit("reason", {"next_action": "act", "rationale": rationale, "logs": []})
    assert f"· 判断（実行） {rationale}" in capsys.readouterr().err


def test_the_command_to_continue_is_one_line_that_runs_as_printed(tmp_path: Path) -> None:
    data = tmp_path / "my data [2024].csv"
    data.write_text("a,b\n1,2\n", encoding="utf-8")
    result = runner.invoke(app, ["analyze", str(data), "明日の天気は？"])
    assert result.exit_code == 0, result.output
    line = next(x for x in result.stdout.splitlines() if x.startswith("続けるには: "))
    assert f"keiri-agent analyze '{data}' \"回答\" --thread " in line
    assert len(line.split("--thread ")[1].strip()) == 32  # the whole thread id on this line


def test_follow_ups_on_the_same_thread_edit_the_result(sales_csv: Path) -> None:
    def ask(text: str, thread: str | None = None) -> dict[str, object]:
        args = ["analyze", str(sales_csv), text, "--json"]
        result = runner.invoke(app, [*args, "--thread", thread] if thread else args)
        assert result.exit_code == 0, result.output
        return dict(json.loads(result.stdout))

    first = ask("売上の合計は？")
    thread = str(first["thread_id"])
    headline = next(a for a in first["artifacts"] if a["kind"] == "text")["text"]  # type: ignore[attr-defined]
    assert "売上の合計: ¥730" in headline
    second = ask("それを関東だけで", thread)
    spec = second["actions"][-1]["spec"]  # type: ignore[index]
    assert spec["op"] == "total" and spec["filters"] == [
        {"col": "地域", "op": "==", "value": "関東"}
    ]
    table = next(a for a in second["artifacts"] if a["kind"] == "table")  # type: ignore[attr-defined]
    assert table["records"][0]["売上_sum"] == 400
    third = ask("月別に", thread)
    spec = third["actions"][-1]["spec"]  # type: ignore[index]
    assert (spec["kind"], spec["x"], spec["y"], spec["freq"]) == ("line", "日付", "売上", "M")
    assert spec["filters"] == [{"col": "地域", "op": "==", "value": "関東"}]
