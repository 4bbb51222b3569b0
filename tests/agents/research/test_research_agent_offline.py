"""The research agent offline: key-phrase queries, extractive summaries, a labelled report."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

from research_agent_support import SNIPPETS, FixedSource, MemoryNoteStore, offline_settings

from keiri_agent.agents.research.agent import DeepResearchAgent
from keiri_agent.agents.research.models import DocSnippet
from keiri_agent.agents.research.offline_reasoner import OfflineResearchReasoner, key_phrases
from keiri_agent.events import Event


def test_plan_uses_the_questions_key_phrases() -> None:
    plan = asyncio.run(
        OfflineResearchReasoner().plan("インボイス制度の登録番号と、端数処理を調べて")
    )
    assert plan.needs_research
    assert plan.queries[0].split() == ["インボイス", "制度", "登録", "番号", "端数", "処理"]
    assert plan.queries[1:] == ["インボイス 制度 登録 番号", "端数 処理"]
    assert "調べる" not in " ".join(plan.queries)


def test_a_question_without_key_phrases_needs_no_research() -> None:
    plan = asyncio.run(OfflineResearchReasoner().plan("調べて"))
    assert not plan.needs_research and plan.queries == [] and plan.reason


def test_extractive_summary_keeps_the_sentences_with_the_query_terms() -> None:
    summary = asyncio.run(
        OfflineResearchReasoner().summarize("q", "端数 処理", [SNIPPETS[0], SNIPPETS[1]])
    )
    assert summary == "端数処理は税率ごとに一回です [2]。"


def test_summary_stays_within_its_bound() -> None:
    long = DocSnippet(ref="a#1", text="請求書の規定です。" * 50, title="a")
    summary = asyncio.run(OfflineResearchReasoner(summary_chars=40).summarize("q", "請求", [long]))
    assert 0 < len(summary) <= 40


def test_offline_run_writes_a_labelled_report_with_checked_citations(tmp_path: Path) -> None:
    events: list[Event] = []
    store = MemoryNoteStore()
    agent = DeepResearchAgent(
        offline_settings(tmp_path), tools=[FixedSource(SNIPPETS)], store=store
    )
    question = "適格請求書の登録番号と、端数処理の変更を調べて"
    result = agent.research(question, session_id="off", on_event=events.append)

    assert agent.offline and result.offline
    assert result.report_md.startswith("# 調査レポート（オフライン）")
    assert store.notes("off") == result.notes and result.notes
    cited = {int(n) for n in re.findall(r"\[(\d+)\]", result.report_md.split("## 出典")[0])}
    assert cited and cited <= set(range(1, len(result.sources) + 1))
    # every cited sentence is a sentence of the source it cites
    for line in result.report_md.split("## 出典")[0].splitlines():
        for number in re.findall(r"\[(\d+)\]", line):
            sentence = re.sub(r" \[\d+\]", "", line.removeprefix("- "))
            assert sentence in result.sources[int(number) - 1].text
    kinds = {event.kind for event in events}
    assert {"plan", "query_started", "hits", "partial_summary", "note_saved", "done"} <= kinds


def test_offline_gap_check_searches_the_uncovered_phrases(tmp_path: Path) -> None:
    source = FixedSource(SNIPPETS)
    agent = DeepResearchAgent(offline_settings(tmp_path), tools=[source], store=MemoryNoteStore())
    result = agent.research("登録番号")
    # every key phrase of the question is covered by the first summary: no gap query
    assert result.queries == ["登録 番号"] and source.queries == ["登録 番号"]
    assert key_phrases("登録番号") == ["登録", "番号"]


def test_sentences_drop_markdown_markers_headings_and_labels() -> None:
    from keiri_agent.agents.research.offline_reasoner import sentences

    text = (
        "# お知らせ\n## 変更点\n- 登録番号を記載します。\n1. 交付日を書きます。\n"
        "経理部通知 第2023-04号"
    )
    assert sentences(text) == ["登録番号を記載します。", "交付日を書きます。"]


def test_a_query_asked_again_in_the_session_reuses_its_note(tmp_path: Path) -> None:
    source = FixedSource(SNIPPETS)
    store = MemoryNoteStore()
    agent = DeepResearchAgent(offline_settings(tmp_path), tools=[source], store=store)
    first = agent.research("インボイス制度の登録番号と端数処理")
    searched = len(source.queries)
    events: list[Event] = []
    again = agent.research(
        "インボイス制度の登録番号と端数処理", session_id=first.session_id, on_event=events.append
    )
    searched_again = source.queries[searched:]
    noted = {note.query for note in first.notes}
    assert noted and not noted & set(searched_again)  # a query with a note is not searched again
    assert [n.step_no for n in again.notes][: len(first.notes)] == [n.step_no for n in first.notes]
    assert sum(note.query in noted for note in store.items) == len(noted)  # not stored twice
    assert any(e.kind == "note_saved" and e.payload.get("reused") for e in events)
    assert re.search(r"\[\d+\]", again.report_md)
