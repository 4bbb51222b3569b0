"""``keiri-agent helpdesk index|status|ask`` on the bundled sample and on user files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from keiri_agent.agents.helpdesk.desk import EXAMPLE_QUESTION, HelpDesk
from keiri_agent.cli.app import app

runner = CliRunner()


def test_ask_before_indexing_fails_with_a_hint(keiri_home: Path) -> None:
    result = runner.invoke(app, ["helpdesk", "ask", EXAMPLE_QUESTION])
    assert result.exit_code == 1
    assert "EMPTY_KNOWLEDGE_BASE" in result.output
    assert "helpdesk index --sample" in result.output


def test_index_sample_then_ask_the_readme_question_offline(keiri_home: Path) -> None:
    first = runner.invoke(app, ["helpdesk", "index", "--sample", "--json"])
    assert first.exit_code == 0, first.output
    reports = json.loads(first.stdout)
    assert sorted(reports["manual"]["added"]) == [
        "xyz_manual.pdf",
        "xyz_notifications.md",
        "xyz_release_notes.docx",
    ]
    assert reports["qa"]["added"] == ["xyz_faq.csv"]

    again = runner.invoke(app, ["helpdesk", "index", "--sample"])
    assert again.exit_code == 0
    assert "manual: 追加 0・更新 0・変更なし 3" in again.output

    status = runner.invoke(app, ["helpdesk", "status", "--json"])
    state = json.loads(status.stdout)
    assert state["stats"]["manual"]["documents"] == 3
    assert {c: r["retriever"] for c, r in state["retrievers"].items()} == {
        "manual": "keyword",
        "qa": "keyword",
    }
    shown = runner.invoke(app, ["helpdesk", "status"])
    assert "検索方式manual:キーワード検索（埋め込みが未設定です" in "".join(shown.output.split())

    answer = runner.invoke(app, ["helpdesk", "ask", EXAMPLE_QUESTION])
    assert answer.exit_code == 0, answer.output
    assert "オフラインモード" in answer.output
    assert "計画: パスワードの条件を教えて / ロックされた時の解除方法を教えて" in answer.output
    assert "出典" in answer.output and "xyz_manual.pdf p.5" in answer.output

    as_json = runner.invoke(app, ["helpdesk", "ask", EXAMPLE_QUESTION, "--json"])
    data = json.loads(as_json.stdout)
    assert data["offline"] is True
    assert [s["task_name"] for s in data["subtasks"]] == data["plan"]["subtasks"]
    assert all(s["tool_results"] and s["reflection_results"] for s in data["subtasks"])
    assert any("2.5 アカウントロックの解除" in source for source in data["sources"])


def test_a_bad_file_is_reported_and_the_others_are_indexed(
    keiri_home: Path, tmp_path: Path
) -> None:
    manuals = tmp_path / "manuals"
    manuals.mkdir()
    (manuals / "guide.md").write_text("# 申請\n\n## 締め日\n\n経費の締め日は毎月25日です。\n")
    (manuals / "broken.pdf").write_bytes(b"%PDF-1.4 this is not a pdf")
    faq = tmp_path / "faq.csv"
    faq.write_text("質問,回答\n締め日はいつ？,毎月25日です。\n", encoding="utf-8")

    result = runner.invoke(app, ["helpdesk", "index", str(manuals), "--qa", str(faq)])

    assert result.exit_code == 1
    assert "✗ broken.pdf" in result.output
    assert "manual: 追加 1" in result.output and "qa: 追加 1" in result.output
    answer = runner.invoke(app, ["helpdesk", "ask", "経費の締め日は？", "--json"])
    assert answer.exit_code == 0, answer.output
    assert any(source.startswith("guide.md") for source in json.loads(answer.stdout)["sources"])

    removed = runner.invoke(app, ["helpdesk", "remove", "guide.md"])
    assert removed.exit_code == 0, removed.output
    assert "削除 1" in removed.output
    after = runner.invoke(app, ["helpdesk", "ask", "経費の締め日は？", "--json"])
    assert not any(s.startswith("guide.md") for s in json.loads(after.stdout)["sources"])
    unknown = runner.invoke(app, ["helpdesk", "remove", "nope.md"])
    assert unknown.exit_code == 1


def test_index_with_nothing_to_index_is_a_clear_error(keiri_home: Path) -> None:
    result = runner.invoke(app, ["helpdesk", "index"])
    assert result.exit_code == 1
    assert "登録する文書が指定されていません" in result.output


def test_the_knowledge_base_synonyms_file_is_shown_used_and_checked(
    keiri_home: Path, tmp_path: Path
) -> None:
    manual = tmp_path / "kintai.md"
    manual.write_text("# 勤怠\n\n## タイムカード\n\nタイムカードの修正は上長が承認します。\n")
    assert runner.invoke(app, ["helpdesk", "index", str(manual)]).exit_code == 0
    status = runner.invoke(app, ["helpdesk", "status", "--json"])
    synonyms_file = Path(json.loads(status.stdout)["synonyms_file"])
    assert synonyms_file.name == "synonyms.txt" and not synonyms_file.exists()
    shown = runner.invoke(app, ["helpdesk", "status"])
    assert "同義語ファイル:" in shown.output and "なし" in shown.output

    question = "打刻の修正方法を教えて"
    before = json.loads(runner.invoke(app, ["helpdesk", "ask", question, "--json"]).stdout)
    assert not before["subtasks"][0]["reflection_results"][0]["is_completed"]

    synonyms_file.write_text("# 社内の言い方\n打刻, タイムカード\n", encoding="utf-8")
    after = json.loads(runner.invoke(app, ["helpdesk", "ask", question, "--json"]).stdout)
    assert after["subtasks"][0]["reflection_results"][0]["is_completed"]

    synonyms_file.write_text("打刻\n", encoding="utf-8")
    bad = runner.invoke(app, ["helpdesk", "ask", question])
    assert bad.exit_code == 1
    assert "1 行目" in bad.output and "SYNONYMS_FILE_INVALID" in bad.output


def test_ask_shows_the_answer_s_warnings(keiri_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert runner.invoke(app, ["helpdesk", "index", "--sample"]).exit_code == 0
    warning = "マニュアルはキーワード検索だけで検索しました（ベクトル検索を使えませんでした: …）"
    monkeypatch.setattr(HelpDesk, "retrieval_warnings", lambda self: [warning])
    answer = runner.invoke(app, ["helpdesk", "ask", EXAMPLE_QUESTION])
    assert answer.exit_code == 0
    assert f"注意: {warning}" in answer.stderr
    as_json = runner.invoke(app, ["helpdesk", "ask", EXAMPLE_QUESTION, "--json"])
    assert json.loads(as_json.stdout)["warnings"] == [warning]


def test_an_faq_kept_in_excel_is_indexed_and_cited_by_row(keiri_home: Path, tmp_path: Path) -> None:
    from openpyxl import Workbook

    workbook = Workbook()
    sheet = workbook.active
    assert sheet is not None
    sheet.append(["No", "分類", "質問", "回答"])
    sheet.append([1, "精算", "経費の締め日はいつですか", "毎月25日が締め日です。"])
    faq = tmp_path / "faq.xlsx"
    workbook.save(faq)

    result = runner.invoke(app, ["helpdesk", "index", "--qa", str(faq)])

    assert result.exit_code == 0, result.output
    assert "qa: 追加 1" in result.output
    answer = runner.invoke(app, ["helpdesk", "ask", "経費の締め日はいつ？", "--json"])
    assert answer.exit_code == 0, answer.output
    assert "faq.xlsx 行1" in " ".join(json.loads(answer.stdout)["sources"])
    wrong = tmp_path / "faq.txt"
    wrong.write_text("質問,回答\n", encoding="utf-8")
    refused = runner.invoke(app, ["helpdesk", "index", "--qa", str(wrong)])
    assert refused.exit_code != 0
    assert "FAQとして登録できません" in refused.output and ".xlsx" in refused.output
