"""The research graph with a scripted model: the happy path, every error path of issue 12
§4, the gap loop's bounds and the round's concurrency."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from langchain_core.messages import BaseMessage
from research_agent_support import (
    SNIPPETS,
    FailingSource,
    FixedSource,
    MemoryNoteStore,
    llm_settings,
    query_of,
    scripted,
    system_text,
)

from keiri_agent.agents.helpdesk.claims import UNSUPPORTED_MARK
from keiri_agent.agents.research.agent import DeepResearchAgent, progress_line
from keiri_agent.agents.research.llm_reasoner import GapOutput, PlanOutput
from keiri_agent.errors import LLMError, UserInputError
from keiri_agent.events import Event

QUESTION = "インボイス制度で請求書フォーマットに必要な変更点は？"


def summary_for(prompt: str) -> str:
    return f"{query_of(prompt)}についての要約です [1]。"


def agent_for(home: Path, model, tools=None, store=None, **overrides) -> DeepResearchAgent:
    return DeepResearchAgent(
        llm_settings(home, **overrides),
        tools=tools if tools is not None else [FixedSource(SNIPPETS)],
        store=store if store is not None else MemoryNoteStore(),
        chat_model=model,
    )


def test_happy_path_saves_notes_and_verifies_citations(tmp_path: Path) -> None:
    plan = PlanOutput(
        needs_research=True, reason="記載事項と通知", queries=["登録番号", "端数処理"]
    )
    report = "## 結論\n\n登録番号の記載が必要です [1]。端数処理も変わります [2]。根拠なし [7]。"
    model = scripted(plan, summary_for, report)
    store = MemoryNoteStore()
    events: list[Event] = []
    agent = agent_for(tmp_path, model, store=store)
    result = agent.research(QUESTION, session_id="s1", on_event=events.append)

    assert result.queries == ["登録番号", "端数処理"]
    assert [(n.step_no, n.query) for n in store.notes("s1")] == [(1, "登録番号"), (2, "端数処理")]
    assert [s.ref for s in result.sources] == ["invoice.pdf#1", "notice.pdf#3"]
    assert "[7]" not in result.report_md
    assert "登録番号の記載が必要です [1]。" in result.report_md
    assert "本文の引用番号 7 は調査で見つかった資料にないため削除しました。" in result.limitations
    assert (
        "## 出典\n\n- [1] invoice.pdf p.2 「1 記載事項」\n- [2] notice.pdf p.1" in result.report_md
    )
    kinds = [event.kind for event in events]
    assert kinds[0] == "plan" and kinds[-1] == "done"
    for kind in ("query_started", "hits", "partial_summary", "note_saved", "gap_check"):
        assert kinds.count(kind) == (1 if kind == "gap_check" else 2), kind
    assert "report_chunk" in kinds
    assert [event.seq for event in events] == list(range(1, len(events) + 1))
    assert all(event.source == "research" for event in events)
    chunks = "".join(str(e.payload["text"]) for e in events if e.kind == "report_chunk")
    assert chunks == result.report_md


def test_the_writer_sees_the_summaries_renumbered_over_the_run(tmp_path: Path) -> None:
    plan = PlanOutput(needs_research=True, reason="", queries=["登録番号", "端数処理"])
    model = scripted(plan, summary_for, "## 結論\n\n済み [1]。")
    agent_for(tmp_path, model).research(QUESTION)
    writer_prompt = model.prompts[-1]
    # the second note's own [1] is the run's second source
    assert "端数処理についての要約です [2]。" in writer_prompt
    assert "[2] notice.pdf p.1" in writer_prompt


def test_empty_plan_answers_immediately_with_the_reason(tmp_path: Path) -> None:
    plan = PlanOutput(needs_research=False, reason="一般的な挨拶のため", queries=["x"])
    model = scripted(plan, summary_for, "unused")
    source = FixedSource(SNIPPETS)
    result = agent_for(tmp_path, model, tools=[source]).research("こんにちは")
    assert "詳細調査は不要です" in result.report_md and "一般的な挨拶のため" in result.report_md
    assert result.needs_research is False and source.queries == [] and len(model.calls) == 1


def test_zero_hits_skips_the_step_and_says_so(tmp_path: Path) -> None:
    plan = PlanOutput(needs_research=True, reason="", queries=["登録番号", "存在しない語"])
    model = scripted(plan, summary_for, "## 結論\n\n登録番号が必要です [1]。")
    store = MemoryNoteStore()
    result = agent_for(tmp_path, model, store=store).research(QUESTION, session_id="s")
    assert [note.query for note in store.notes("s")] == ["登録番号"]
    assert any(
        "「存在しない語」では該当する資料が見つからなかった" in i for i in result.limitations
    )
    assert "存在しない語" in result.report_md.split("## 調査の限界")[1]


def test_a_search_over_its_timeout_is_reported_and_the_rest_is_written(tmp_path: Path) -> None:
    plan = PlanOutput(needs_research=True, reason="", queries=["登録番号"])
    model = scripted(plan, summary_for, "## 結論\n\n登録番号が必要です [1]。")
    slow = FixedSource(SNIPPETS, name="遅い検索元", delay_s=1.0)
    fast = FixedSource(SNIPPETS[:1])
    agent = agent_for(tmp_path, model, tools=[slow, fast], research_search_timeout_s=0.2)
    result = agent.research(QUESTION)
    assert any("遅い検索元" in i and "制限時間" in i for i in result.limitations)
    assert "登録番号が必要です [1]。" in result.report_md and len(result.notes) == 1


def test_summaries_over_their_timeout_leave_nothing_and_the_writer_declines(
    tmp_path: Path,
) -> None:
    plan = PlanOutput(needs_research=True, reason="", queries=["登録番号", "端数処理"])
    model = scripted(
        plan,
        summary_for,
        "invented",
        delay_s=0.5,
    )
    agent = agent_for(tmp_path, model, research_summary_timeout_s=0.1)
    result = agent.research(QUESTION)
    assert result.notes == [] and "invented" not in result.report_md
    assert "レポートは作成していません" in result.report_md
    assert sum("制限時間内に終わりませんでした" in i for i in result.limitations) == 2
    # plan + two summaries; the writer is never asked
    assert len(model.calls) == 3


def test_every_step_empty_declines_instead_of_inventing(tmp_path: Path) -> None:
    plan = PlanOutput(needs_research=True, reason="", queries=["該当なし一", "該当なし二"])
    model = scripted(plan, summary_for, "## 結論\n\n作り話 [1]。")
    result = agent_for(tmp_path, model).research(QUESTION)
    assert "作り話" not in result.report_md and "レポートは作成していません" in result.report_md
    assert result.sources == [] and len(model.calls) == 1


def test_a_failing_source_is_reported_and_the_others_continue(tmp_path: Path) -> None:
    plan = PlanOutput(needs_research=True, reason="", queries=["登録番号"])
    model = scripted(plan, summary_for, "## 結論\n\n登録番号が必要です [1]。")
    events: list[Event] = []
    agent = agent_for(tmp_path, model, tools=[FailingSource(), FixedSource(SNIPPETS)])
    result = agent.research(QUESTION, on_event=events.append)
    assert len(result.notes) == 1
    limitation = next(i for i in result.limitations if "Azure AI Search（docs）" in i)
    assert "HTTP 503" in limitation and "エンドポイントとキーを確認" in limitation
    assert any(e.kind == "error" and e.payload.get("source") for e in events)


def test_an_llm_fault_in_one_summary_fails_that_step_only(tmp_path: Path) -> None:
    def summarize(prompt: str) -> str:
        if query_of(prompt) == "端数処理":
            raise LLMError("the model service failed: RateLimitError", hint="wait")
        return summary_for(prompt)

    plan = PlanOutput(needs_research=True, reason="", queries=["登録番号", "端数処理"])
    model = scripted(plan, summarize, "## 結論\n\n登録番号が必要です [1]。")
    result = agent_for(tmp_path, model).research(QUESTION)
    assert [note.query for note in result.notes] == ["登録番号"]
    assert any(
        "「端数処理」の調査がエラーになりました（LLM_ERROR）" in i for i in result.limitations
    )
    assert "登録番号が必要です [1]。" in result.report_md


def test_an_invalid_plan_fails_the_answer_not_the_process(tmp_path: Path) -> None:
    model = scripted({"needs_research": "maybe?", "queries": 3}, summary_for, "unused")
    events: list[Event] = []
    result = agent_for(tmp_path, model, structured_output_reasks=1).research(
        QUESTION, on_event=events.append
    )
    assert "調査を計画できませんでした" in result.report_md
    assert [e.kind for e in events][:1] == ["error"] and events[-1].kind == "done"
    assert len(model.calls) == 2


def test_a_failing_writer_falls_back_to_the_summaries(tmp_path: Path) -> None:
    plan = PlanOutput(needs_research=True, reason="", queries=["登録番号"])

    def respond_report() -> str:
        raise LLMError("the model service failed: APITimeoutError")

    model = scripted(plan, summary_for, "")
    original = model.respond
    assert original is not None

    def respond(messages: list[BaseMessage], tools: list[str]):
        if "調査レポートを書きます" in system_text(messages):
            return respond_report()
        return original(messages, tools)

    model.respond = respond
    result = agent_for(tmp_path, model).research(QUESTION)
    assert "登録番号についての要約です [1]。" in result.report_md
    assert any("レポートの作成がエラーになりました" in i for i in result.limitations)


def test_gap_check_adds_queries_within_the_plans_budget(tmp_path: Path) -> None:
    plan = PlanOutput(needs_research=True, reason="", queries=["登録番号"])
    gaps = [GapOutput(missing="端数と期日", queries=["登録番号", "端数処理", "精算", "税率"])]
    model = scripted(plan, summary_for, "## 結論\n\n済み [1]。", gaps=gaps)
    source = FixedSource(SNIPPETS)
    result = agent_for(tmp_path, model, tools=[source]).research(QUESTION)
    # one planned + two added = the budget of three; no second gap check is asked
    assert result.queries == ["登録番号", "端数処理", "精算"]
    assert sorted(source.queries) == sorted(result.queries)
    assert sum("足りない情報" in system_text(call) for call in model.calls) == 1


def test_gap_loop_stops_at_max_cycles(tmp_path: Path) -> None:
    plan = PlanOutput(needs_research=True, reason="", queries=["登録番号"])
    gaps = [GapOutput(missing="a", queries=["端数処理"]), GapOutput(missing="b", queries=["精算"])]
    model = scripted(plan, summary_for, "## 結論\n\n済み [1]。", gaps=gaps)
    result = agent_for(tmp_path, model, research_max_cycles=2).research(QUESTION)
    assert result.queries == ["登録番号", "端数処理"]
    assert sum("足りない情報" in system_text(call) for call in model.calls) == 1


def is_summary(messages: list[BaseMessage], tools: list[str]) -> bool:
    return "要約" in system_text(messages)


def test_a_rounds_queries_are_summarised_concurrently(tmp_path: Path) -> None:
    plan = PlanOutput(needs_research=True, reason="", queries=["登録番号", "端数処理", "請求書"])
    model = scripted(
        plan, summary_for, "## 結論\n\n済み [1]。", wait_for_concurrent=3, wait_if=is_summary
    )
    result = agent_for(tmp_path, model).research(QUESTION)
    assert model.peak_in_flight == 3 and len(result.notes) == 3


def test_the_concurrency_setting_limits_the_round(tmp_path: Path) -> None:
    plan = PlanOutput(needs_research=True, reason="", queries=["登録番号", "端数処理", "請求書"])
    model = scripted(plan, summary_for, "## 結論\n\n済み [1]。", delay_s=0.05)
    agent_for(tmp_path, model, research_concurrency=1).research(QUESTION)
    assert model.peak_in_flight == 1


def test_run_yields_progress_lines_then_the_report(tmp_path: Path) -> None:
    plan = PlanOutput(needs_research=True, reason="", queries=["登録番号"])
    model = scripted(plan, summary_for, "## 結論\n\n登録番号が必要です [1]。")
    agent = agent_for(tmp_path, model)

    async def collect() -> list[str]:
        return [piece async for piece in agent.run(QUESTION)]

    pieces = asyncio.run(collect())
    report_start = next(i for i, p in enumerate(pieces) if p.startswith("## 結論"))
    progress = pieces[:report_start]
    assert progress[0].startswith("計画: クエリ 1 件") and all(p.endswith("\n") for p in progress)
    assert any("検索中: 登録番号" in p for p in progress)
    report = "".join(pieces[report_start:])
    assert report.startswith("## 結論\n\n登録番号が必要です [1]。") and "## 出典" in report


def test_events_stream_ends_with_done(tmp_path: Path) -> None:
    plan = PlanOutput(needs_research=True, reason="", queries=["登録番号"])
    agent = agent_for(tmp_path, scripted(plan, summary_for, "## 結論\n\n済み [1]。"))

    async def collect() -> list[Event]:
        return [event async for event in agent.events(QUESTION, session_id="abc")]

    events = asyncio.run(collect())
    assert events[-1].kind == "done" and events[-1].payload["session_id"] == "abc"
    assert all(
        progress_line(e) is not None for e in events if e.kind not in ("report_chunk", "done")
    )


def test_an_empty_question_is_refused(tmp_path: Path) -> None:
    agent = agent_for(
        tmp_path, scripted(PlanOutput(needs_research=False, reason=""), summary_for, "")
    )
    with pytest.raises(UserInputError):
        agent.research("  ")


def test_summary_is_bounded_by_summary_tokens(tmp_path: Path) -> None:
    plan = PlanOutput(needs_research=True, reason="", queries=["登録番号"])
    model = scripted(plan, summary_for, "## 結論\n\n済み [1]。")
    agent_for(tmp_path, model, research_summary_tokens=200).research(QUESTION)
    summary_prompt = next(p for p in model.prompts if "要約" in p)
    assert "約 200 トークン以内" in summary_prompt


def test_every_step_is_closed_and_the_progress_counts_every_query(tmp_path: Path) -> None:
    """A step with hits but no summary, and one without hits, each end with
    ``step_skipped``; the progress counts the planned and the added queries."""
    plan = PlanOutput(needs_research=True, reason="", queries=["登録番号"])
    gaps = [GapOutput(missing="精算と期限", queries=["出張旅費", "該当なしの語"])]

    def summarize(prompt: str) -> str:
        return "" if query_of(prompt) == "出張旅費" else summary_for(prompt)

    model = scripted(plan, summarize, "## 結論\n\n登録番号が必要です [1]。", gaps)
    events: list[Event] = []
    agent_for(tmp_path, model).research(QUESTION, on_event=events.append)

    kinds = [event.kind for event in events]
    skipped = {e.payload["query"]: e for e in events if e.kind == "step_skipped"}
    assert skipped["出張旅費"].payload["reason"] == "no_summary"
    assert skipped["出張旅費"].payload["count"] == 1
    assert skipped["該当なしの語"].payload["reason"] == "no_hits"
    assert kinds.index("step_skipped") < len(kinds) - 1 - kinds[::-1].index("gap_check")
    started = {e.payload["step_no"] for e in events if e.kind == "query_started"}
    closing = ("note_saved", "step_skipped")
    assert {e.payload["step_no"] for e in events if e.kind in closing} == started
    lines = [line for e in events if (line := progress_line(e))]
    assert lines[0].startswith("計画: クエリ 1 件")
    assert any("追加クエリ 2 件" in line for line in lines), lines
    assert any("要約せずに省きました: 出張旅費" in line for line in lines), lines
    assert any("見つからなかったため、省きました: 該当なしの語" in line for line in lines)
    assert lines[-1] == "完了: 調べたクエリ 計 3 件、ノート 1 件"


def test_a_report_sentence_its_cited_source_does_not_say_is_marked_and_cites_nothing(
    tmp_path: Path,
) -> None:
    """The writer's claims are checked against the sources they cite: a supported one
    keeps its citation; one the source does not say is marked, loses its number, the
    source it alone cited leaves 出典, and the limitations say so."""
    plan = PlanOutput(needs_research=True, reason="記載事項", queries=["登録番号", "端数処理"])
    report = (
        "## 結論\n\n"
        "適格請求書には登録番号を記載する必要があります [1]。"
        "請求書フォーマットの変更は2025年4月から義務になります [2]。"
    )
    model = scripted(plan, summary_for, report)
    result = agent_for(tmp_path, model).research(QUESTION)

    assert "適格請求書には登録番号を記載する必要があります [1]。" in result.report_md
    assert f"2025年4月から義務になります{UNSUPPORTED_MARK}。" in result.report_md
    assert [source.ref for source in result.sources] == ["invoice.pdf#1"]
    assert any("確認できなかった記述 1 件" in line for line in result.limitations)


def test_a_source_searched_by_keywords_alone_is_named_in_the_limitations(
    tmp_path: Path,
) -> None:
    class KeywordOnly(FixedSource):
        def retrieval_warnings(self) -> list[str]:
            return ["ナレッジベース「kitei」の一部はキーワード検索だけで検索しました。"]

    plan = PlanOutput(needs_research=True, reason="記載事項", queries=["登録番号"])
    model = scripted(
        plan, summary_for, "## 結論\n\n適格請求書には登録番号を記載する必要があります [1]。"
    )
    result = agent_for(tmp_path, model, tools=[KeywordOnly(SNIPPETS)]).research(QUESTION)
    assert "ナレッジベース「kitei」の一部はキーワード検索だけで検索しました。" in result.limitations
    assert "キーワード検索だけで検索しました" in result.report_md
