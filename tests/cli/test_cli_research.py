"""``keiri-agent research`` offline on a fresh workspace: the README question with
``--sample``, JSON, notes; the sample only when asked for, and then alone."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from keiri_agent.agents.research.sources.internal import knowledge_base_names
from keiri_agent.agents.research.sources.testing import AzureSearchStub
from keiri_agent.cli.app import app
from keiri_agent.config import Settings
from keiri_agent.services.research import EXAMPLE_QUESTION

runner = CliRunner()

AZURE_DOCS = [
    {"id": "az-1", "content": "インボイス制度では請求書に登録番号が必要です。", "title": "社外規程"}
]


def _azure(monkeypatch: pytest.MonkeyPatch, stub: AzureSearchStub) -> None:
    monkeypatch.setenv("KEIRI_AGENT_RESEARCH_AZURE_SEARCH_ENDPOINT", stub.base_url)
    monkeypatch.setenv("KEIRI_AGENT_RESEARCH_AZURE_SEARCH_INDEX", "kitei")
    monkeypatch.setenv("KEIRI_AGENT_RESEARCH_AZURE_SEARCH_API_KEY", "azs-key-0123456789abcdef")


def test_readme_question_with_sample_indexes_the_sample_and_cites_sources(
    keiri_home: Path,
) -> None:
    result = runner.invoke(app, ["research", "--sample", EXAMPLE_QUESTION])
    assert result.exit_code == 0, result.output
    assert "サンプル資料を読み込みました" in result.stderr
    assert "サンプル資料だけを検索します" in result.stderr
    assert "計画（オフライン）" in result.stderr and "ノートを保存しました" in result.stderr
    assert "調査レポート（オフライン）" in result.stdout
    assert re.search(r"\[\d+\]", result.stdout) and "出典" in result.stdout


def test_without_sample_nothing_is_indexed_and_the_error_says_what_to_do(
    keiri_home: Path,
) -> None:
    result = runner.invoke(app, ["research", EXAMPLE_QUESTION])
    assert result.exit_code == 1, result.output
    assert "検索できる資料がありません" in result.stderr
    hint = " ".join(result.stderr.split())
    assert "keiri-agent helpdesk index" in hint and "--sample" in hint
    assert knowledge_base_names(Settings()) == []


def test_with_azure_and_no_knowledge_base_only_azure_is_searched(
    keiri_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    answers = [AzureSearchStub.documents(AZURE_DOCS) for _ in range(6)]
    with AzureSearchStub(answers) as stub:
        _azure(monkeypatch, stub)
        result = runner.invoke(app, ["research", EXAMPLE_QUESTION])
    assert result.exit_code == 0, result.output
    assert "サンプル資料" not in result.stderr
    found = re.findall(r"\] (\d+) 件見つかりました", result.stderr)
    assert found and set(found) == {"1"}  # the one Azure document, no sample passage
    assert len(stub.requests) == len(found)
    assert knowledge_base_names(Settings()) == []  # the sample was not indexed


def test_sample_searches_the_sample_alone_even_with_azure_configured(
    keiri_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with AzureSearchStub([AzureSearchStub.documents(AZURE_DOCS)]) as stub:
        _azure(monkeypatch, stub)
        result = runner.invoke(app, ["research", "--sample", EXAMPLE_QUESTION, "--json"])
        mixed = runner.invoke(app, ["research", "--sample", "--kb", "kitei", EXAMPLE_QUESTION])
    assert result.exit_code == 0, result.output
    assert stub.requests == []
    data = json.loads(result.stdout)
    assert data["sources"] and {s["origin"] for s in data["sources"]} == {"kb:research"}
    assert mixed.exit_code == 1 and "一緒には検索できません" in mixed.stderr


MIXED_QUESTION = "請求書の登録番号と、出張旅費の精算期限と、宇宙旅行の規程を調べて"
"""Three parts; the sample has passages for each, but not on all of them (offline)."""


def test_every_step_is_closed_and_the_queries_are_counted(keiri_home: Path) -> None:
    result = runner.invoke(app, ["research", "--sample", MIXED_QUESTION])
    assert result.exit_code == 0, result.output
    lines = [line for line in result.stderr.splitlines() if line.startswith("· ")]
    planned = int(next(re.findall(r"クエリ (\d+) 件", line) for line in lines if "計画" in line)[0])
    added = sum(int(n) for line in lines for n in re.findall(r"追加クエリ (\d+) 件", line))
    found = {m[1] for line in lines if (m := re.match(r"· \[(\d+)\] \d+ 件見つかりました", line))}
    closed = {
        m[1] for line in lines if (m := re.match(r"· \[(\d+)\] (要約しました|.*省きました)", line))
    }
    assert found and found <= closed, lines
    assert any("要約せずに省きました" in line for line in lines), lines
    assert lines[-1].startswith(f"· 完了: 調べたクエリ 計 {planned + added} 件"), lines


def test_json_then_notes_list_show_delete(keiri_home: Path) -> None:
    result = runner.invoke(app, ["research", "--sample", EXAMPLE_QUESTION, "--json"])
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
