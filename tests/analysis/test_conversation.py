"""The conversation does not derail: new requests stand alone, answers complete the pending
request, out-of-scope requests are refused and the next request works, reports on request."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pandas as pd
import pytest
from langchain_core.messages import BaseMessage, HumanMessage
from test_offline_reasoner import EN, JA, decide, spec_of

from keiri_agent.agents.analysis import AnalysisAgent
from keiri_agent.agents.analysis.messages import agent_message, pending_request
from keiri_agent.config import Settings

_ARTIFACT = {"artifact_id": "t1", "kind": "text", "title": "x", "description": "", "payload": "y"}


def test_a_complete_request_after_an_ask_is_handled_on_its_own() -> None:
    messages: list[BaseMessage] = [
        HumanMessage("来月の売上を予測して"),
        agent_message("対応していません", "out_of_scope"),
        agent_message("どのような分析をしますか？", "ask"),
        HumanMessage("地域別の売上合計"),
    ]
    spec = spec_of(decide(messages))
    assert (spec["op"], spec["group_cols"]) == ("groupby_agg", ["地域"])


def test_an_answer_completes_only_the_pending_request() -> None:
    messages: list[BaseMessage] = [
        HumanMessage("地域別の売上合計を見せて"),
        agent_message("# 分析レポート", "report"),
        HumanMessage("集計して"),
        agent_message("どの列ごとに集計しますか？", "ask"),
        HumanMessage("地域別で"),
        agent_message("どの数値列を集計しますか？", "ask"),
        HumanMessage("売上の合計"),
    ]
    decision = decide(messages)
    spec = spec_of(decision)
    assert spec["group_cols"] == ["地域"] and "売上" in spec["metrics"]
    assert decision.request == "集計して 地域別で 売上の合計"


def test_a_new_request_after_an_ask_does_not_inherit_it() -> None:
    messages: list[BaseMessage] = [
        HumanMessage("集計して"),
        agent_message("どの列ごとに集計しますか？", "ask"),
        HumanMessage("売上の分布をヒストグラムで見せて"),
    ]
    decision = decide(messages)
    assert spec_of(decision)["kind"] == "hist"
    assert decision.request == "売上の分布をヒストグラムで見せて"


def test_pending_request_names_each_text_once() -> None:
    messages: list[BaseMessage] = [
        HumanMessage("地域別の売上"),
        agent_message("どの方法で集計しますか？", "ask"),
        HumanMessage("地域別の売上"),
    ]
    assert pending_request(messages) == "地域別の売上"


def test_after_the_refusal_with_nothing_left_the_turn_ends_on_the_refusal() -> None:
    messages: list[BaseMessage] = [
        HumanMessage("来月の売上を予測して"),
        agent_message("対応していません", "out_of_scope"),
    ]
    assert decide(messages).next_action == "out_of_scope"


@pytest.mark.parametrize(
    "text,summary",
    [
        ("天気のデータと売上の関係を見て", JA),
        ("売上と株価を比較して", JA),
        ("Compare sales with the weather", EN),
        ("クラスタリングして", JA),
        ("回帰モデルを作って", JA),
        ("機械学習で分類して", JA),
    ],
)
def test_external_data_and_ml_are_out_of_scope(text: str, summary: dict[str, object]) -> None:
    assert decide(text, summary).next_action == "out_of_scope"  # type: ignore[arg-type]


def test_a_column_named_like_external_data_is_in_scope() -> None:
    weather = {
        **JA,
        "columns": [
            *JA["columns"],
            {"name": "天気", "kind": "categorical", "examples": ["晴れ", "雨"], "missing": 0},
        ],
    }
    spec = spec_of(decide("天気別の売上合計", weather))
    assert spec["group_cols"] == ["天気"]


@pytest.mark.parametrize(
    "text,summary",
    [
        ("レポートにまとめて", JA),
        ("報告書にして", JA),
        ("結果をまとめて", JA),
        ("まとめてください", JA),
        ("write it up", EN),
        ("summarize the results as a report", EN),
    ],
)
def test_report_phrasings_produce_the_report(text: str, summary: dict[str, object]) -> None:
    done = decide(text, summary, artifacts=(_ARTIFACT,))  # type: ignore[arg-type]
    assert done.next_action == "finalize"
    nothing = decide(text, summary)  # type: ignore[arg-type]
    assert nothing.next_action == "ask"
    assert "まだ分析結果がありません" in nothing.rationale or "Nothing" in nothing.rationale


def test_an_analysis_with_a_report_word_still_runs() -> None:
    spec = spec_of(decide("地域別の売上合計をレポートにまとめて"))
    assert spec["group_cols"] == ["地域"]


def test_the_whole_conversation_with_the_offline_agent() -> None:
    frame = pd.DataFrame(
        {
            "地域": ["関東", "関西", "関東", "九州"],
            "売上": [100.0, 250.0, 300.0, 80.0],
            "数量": [1, 2, 3, 1],
            "日付": pd.to_datetime(["2025-01-05", "2025-01-20", "2025-02-03", "2025-02-14"]),
        }
    )
    with (
        tempfile.TemporaryDirectory() as home,
        AnalysisAgent(Settings(home=Path(home)), chat_model=None) as agent,
    ):
        dataset = agent.registry.add_frame(frame, "sales.csv")

        def ask(text: str) -> str:
            turn = agent.ask(text, dataset_id=dataset, thread_id="t1")
            return turn.report_md or turn.reply

        assert "**依頼**: 地域別の売上合計を見せて\n" in ask("地域別の売上合計を見せて")
        refusal = ask("来月の売上を予測して")
        assert "対応していません" in refusal and "代わりに" in refusal
        assert "どの列ごとに集計しますか" in ask("集計して")
        assert "どの数値列" in ask("地域別で")
        report = ask("地域別の売上合計")
        assert "**依頼**: 地域別の売上合計\n" in report and "予測" not in report
        assert "## 根拠" in ask("レポートにまとめて")
