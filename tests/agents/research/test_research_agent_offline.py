"""The research agent offline: sub-questions in words, supported summaries, a labelled report."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

from research_agent_support import SNIPPETS, FixedSource, MemoryNoteStore, offline_settings

from keiri_agent.agents.research.agent import DeepResearchAgent
from keiri_agent.agents.research.models import DocSnippet
from keiri_agent.agents.research.offline_reasoner import (
    OfflineResearchReasoner,
    key_phrases,
    sub_questions,
)
from keiri_agent.events import Event


def test_plan_asks_the_questions_parts_in_words() -> None:
    plan = asyncio.run(
        OfflineResearchReasoner().plan("インボイス制度の登録番号と、端数処理を調べて")
    )
    assert plan.needs_research
    assert plan.queries == ["インボイス制度の登録番号", "端数処理"]


def test_sub_questions_keep_the_subject_and_drop_the_request_and_where_to_look() -> None:
    # issue 29: the queries were 「インボイス 制度 請求 必要 記載 事項 社内 資料」, 「事項」
    assert sub_questions("インボイス制度で請求書に必要な記載事項を社内資料から調べて") == [
        "インボイス制度で請求書に必要な記載事項"
    ]
    assert sub_questions("v8.1の変更点と、交通費（電車、バス）の精算方法を教えて") == [
        "v8.1の変更点",
        "交通費（電車、バス）の精算方法",
    ]


def test_a_question_without_key_phrases_needs_no_research() -> None:
    plan = asyncio.run(OfflineResearchReasoner().plan("調べて"))
    assert not plan.needs_research and plan.queries == [] and plan.reason


def test_extractive_summary_keeps_the_sentences_with_the_query_terms() -> None:
    summary = asyncio.run(
        OfflineResearchReasoner().summarize("q", "端数処理", [SNIPPETS[0], SNIPPETS[1]])
    )
    assert summary == "端数処理は税率ごとに一回です [2]。"


def test_a_summary_is_written_only_from_passages_that_answer_the_sub_question() -> None:
    # the passages name 登録番号 and 請求書 but nothing about a タイムスタンプ
    summary = asyncio.run(
        OfflineResearchReasoner().summarize(
            "q", "電子帳簿保存法のタイムスタンプの付与期限", [SNIPPETS[0], SNIPPETS[1]]
        )
    )
    assert summary == ""


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
            # a 結論 line names its sub-question first: 「- 端数処理の変更: …」
            sentence = re.sub(r" \[\d+\]", "", line.removeprefix("- ")).split(": ", 1)[-1]
            assert sentence in result.sources[int(number) - 1].text
    kinds = {event.kind for event in events}
    assert {"plan", "query_started", "hits", "partial_summary", "note_saved", "done"} <= kinds


def test_offline_gap_check_searches_the_uncovered_phrases(tmp_path: Path) -> None:
    source = FixedSource(SNIPPETS)
    agent = DeepResearchAgent(offline_settings(tmp_path), tools=[source], store=MemoryNoteStore())
    result = agent.research("登録番号")
    # the one sub-question is answered by the first summary: no gap query
    assert result.queries == ["登録番号"] and source.queries == ["登録番号"]
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


def test_an_unanswerable_part_is_declined_in_the_conclusion(tmp_path: Path) -> None:
    agent = DeepResearchAgent(
        offline_settings(tmp_path), tools=[FixedSource(SNIPPETS)], store=MemoryNoteStore()
    )
    result = agent.research("適格請求書の登録番号と、電子帳簿保存法のタイムスタンプの期限を調べて")
    conclusion = result.report_md.split("## 結論")[1].split("\n## ")[0]
    assert (
        "適格請求書の登録番号: 適格請求書には登録番号を記載する必要があります [1]。" in conclusion
    )
    assert "電子帳簿保存法のタイムスタンプの期限: 資料には記載がありません。" in conclusion


def test_a_question_the_documents_cannot_answer_is_declined(tmp_path: Path) -> None:
    agent = DeepResearchAgent(
        offline_settings(tmp_path), tools=[FixedSource(SNIPPETS)], store=MemoryNoteStore()
    )
    # 請求書 is in the passages, freee and 仕訳連携 are not
    result = agent.research("freeeとの仕訳連携の手順を請求書の資料から調べて")
    assert not result.notes and not result.sources
    assert "根拠になる資料が見つかりませんでした" in result.report_md


def test_sources_lists_only_the_passages_the_report_cites(tmp_path: Path) -> None:
    memo = DocSnippet(
        ref="memo#1", text="備考欄の記載は任意です。", title="メモ", document="memo.md"
    )
    agent = DeepResearchAgent(
        offline_settings(tmp_path), tools=[FixedSource([*SNIPPETS, memo])], store=MemoryNoteStore()
    )
    result = agent.research("登録番号の記載について調べて")
    body, listed = result.report_md.split("## 出典")
    cited = sorted({int(n) for n in re.findall(r"\[(\d+)\]", body)})
    assert cited == list(range(1, len(result.sources) + 1))  # renumbered, none uncited
    assert listed.count("- [") == len(result.sources)
    # the note kept every hit; the report's sources are only those it cites
    assert len(result.sources) < sum(len(note.sources) for note in result.notes)
