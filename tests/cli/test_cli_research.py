"""``keiri-agent research`` offline on a fresh workspace: the README question, JSON, notes."""

from __future__ import annotations

import json
import re
from pathlib import Path

from typer.testing import CliRunner

from keiri_agent.cli.app import app
from keiri_agent.services.research import EXAMPLE_QUESTION

runner = CliRunner()


def test_readme_question_offline_indexes_the_sample_and_cites_sources(keiri_home: Path) -> None:
    result = runner.invoke(app, ["research", EXAMPLE_QUESTION])
    assert result.exit_code == 0, result.output
    assert "サンプル資料を索引しました" in result.stderr
    assert "計画（オフライン）" in result.stderr and "ノートを保存しました" in result.stderr
    assert "調査レポート（オフライン）" in result.stdout
    assert re.search(r"\[\d+\]", result.stdout) and "出典" in result.stdout


def test_json_then_notes_list_show_delete(keiri_home: Path) -> None:
    result = runner.invoke(app, ["research", EXAMPLE_QUESTION, "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["offline"] and data["notes"] and data["sources"][0]["number"] == 1
    cited = {int(n) for n in re.findall(r"\[(\d+)\]", data["report_md"])}
    assert cited and max(cited) <= len(data["sources"])
    session = data["session_id"]

    listed = json.loads(runner.invoke(app, ["research", "notes", "list", "--json"]).stdout)
    assert [item["session_id"] for item in listed] == [session]
    shown = runner.invoke(app, ["research", "notes", "show", session, "--json"])
    assert [note["step_no"] for note in json.loads(shown.stdout)] == [
        note["step_no"] for note in data["notes"]
    ]
    deleted = runner.invoke(app, ["research", "notes", "delete", session, "--json"])
    assert json.loads(deleted.stdout) == {"session_id": session, "deleted": len(data["notes"])}
    missing = runner.invoke(app, ["research", "notes", "show", session])
    assert missing.exit_code == 1 and "ノートはありません" in missing.stderr


def test_usage_errors(keiri_home: Path) -> None:
    assert runner.invoke(app, ["research", "  "]).exit_code == 2
    unknown = runner.invoke(app, ["research", "請求書", "--kb", "nothing"])
    assert unknown.exit_code == 1 and "ナレッジベース" in unknown.stderr
