"""The analysis graph end to end: every route, error recovery, limits, checkpoints.

The LLM reasoner is driven by the scripted chat model (and once through the stub
OpenAI server); the executor, registry, isolation and SQLite checkpointer are real.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pandas as pd
import pytest
from langchain_core.messages import HumanMessage

from keiri_agent.agents.analysis import AnalysisAgent
from keiri_agent.agents.analysis.reasoning.decision import Decision
from keiri_agent.agents.analysis.report import ReportProse
from keiri_agent.config import Settings
from keiri_agent.errors import LLMError
from keiri_agent.llm.testing import ScriptedChatModel, StubOpenAIServer

GROUPBY = {
    "type": "analysis",
    "op": "groupby_agg",
    "group_cols": ["地域"],
    "metrics": {"売上": ["sum", "mean"]},
    "sort": {"by": "売上_sum", "ascending": False},
}
HIST = {"type": "plot", "kind": "hist", "x": "売上", "title": "売上の分布"}


@pytest.fixture
def sales() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "地域": ["関東", "関西", "関東", "九州", "関西", "関東"],
            "売上": [100.0, 250.0, 300.0, 80.0, 50.0, 120.0],
            "数量": [1, 2, 3, 1, 1, 2],
            "日付": pd.to_datetime(
                ["2025-01-05", "2025-01-20", "2025-02-03", "2025-02-14", "2025-03-01", "2025-03-09"]
            ),
        }
    )


def make_agent(tmp_path: Path, replies: list[object], **overrides: object) -> AnalysisAgent:
    settings = Settings(home=tmp_path, **overrides)  # type: ignore[arg-type]
    return AnalysisAgent(settings, chat_model=ScriptedChatModel(replies))


def scripted(agent: AnalysisAgent) -> ScriptedChatModel:
    model = agent.chat_model
    assert isinstance(model, ScriptedChatModel)
    return model


def test_act_then_finalize_writes_report_with_all_sections(
    tmp_path: Path, sales: pd.DataFrame
) -> None:
    replies = [
        Decision(
            next_action="act",
            rationale="集計する",
            analysis_spec=GROUPBY,
            assumptions=["集計方法は合計と平均"],
        ),
        Decision(next_action="act", rationale="分布を見る", plot_spec=HIST),
        Decision(next_action="finalize", rationale="完了"),
        ReportProse(
            conclusions=["関東の売上合計が最大（表1: 520）"], suggestions=["月別推移を見る"]
        ),
    ]
    with make_agent(tmp_path, replies) as agent:
        dataset_id = agent.registry.add_frame(sales, "sales.csv")
        turn = agent.ask("地域別の売上の合計と平均、分布も見せて", dataset_id=dataset_id)

    assert turn.next_action == "finalize"
    assert [a["spec"] for a in turn.actions] == [GROUPBY, HIST]
    kinds = [a["kind"] for a in turn.artifacts]
    assert "table" in kinds and "figure" in kinds
    table = next(a for a in turn.artifacts if a["kind"] == "table")
    by_region = {r["地域"]: r["売上_sum"] for r in table["payload"]["records"]}  # type: ignore[index]
    assert by_region == sales.groupby("地域")["売上"].sum().to_dict()
    report = turn.report_md or ""
    for heading in ("## 結論", "## 根拠", "## 再現要約", "## 仮定", "## 深掘り提案"):
        assert heading in report
    assert "関東の売上合計が最大" in report
    assert '"op": "groupby_agg"' in report and '"kind": "hist"' in report
    assert "集計方法は合計と平均" in report
    assert turn.report_artifacts and turn.reply == report


def test_ask_ends_the_turn_with_the_question(tmp_path: Path, sales: pd.DataFrame) -> None:
    replies = [
        Decision(
            next_action="ask",
            rationale="指標が不明",
            clarifying_questions=["どの指標を集計しますか？（売上 / 数量）"],
        )
    ]
    with make_agent(tmp_path, replies) as agent:
        dataset_id = agent.registry.add_frame(sales, "sales.csv")
        turn = agent.ask("地域別に集計して", dataset_id=dataset_id)
    assert turn.next_action == "ask"
    assert "どの指標を集計しますか" in turn.reply
    assert turn.report_md is None and turn.artifacts == []


def test_out_of_scope_offers_alternatives_then_waits(tmp_path: Path, sales: pd.DataFrame) -> None:
    replies = [
        Decision(next_action="out_of_scope", rationale="予測モデルは対象外"),
        Decision(next_action="out_of_scope", rationale="予測モデルは対象外"),
    ]
    with make_agent(tmp_path, replies) as agent:
        dataset_id = agent.registry.add_frame(sales, "sales.csv")
        turn = agent.ask("来月の売上を予測して", dataset_id=dataset_id)
    assert turn.next_action == "ask"
    assert "対応範囲外" in turn.reply
    assert "日付 ごとの 売上 の推移" in turn.reply


def test_error_reaches_reason_through_last_error_and_is_fixed(
    tmp_path: Path, sales: pd.DataFrame
) -> None:
    wrong = {**GROUPBY, "metrics": {"売り上げ": ["sum"]}, "sort": None}
    replies = [
        Decision(next_action="act", rationale="集計", analysis_spec=wrong),
        Decision(next_action="act", rationale="列名を修正", analysis_spec=GROUPBY),
        Decision(next_action="finalize", rationale="完了"),
        ReportProse(conclusions=["関東が最大"]),
    ]
    with make_agent(tmp_path, replies) as agent:
        dataset_id = agent.registry.add_frame(sales, "sales.csv")
        turn = agent.ask("地域別の売上合計", dataset_id=dataset_id)
        model = scripted(agent)
    second_prompt = model.prompts[1]
    assert "列 '売り上げ' は見つかりません" in second_prompt
    assert "もしかして '売上' ですか" in second_prompt
    assert [a["ok"] for a in turn.actions] == [False, True]
    assert turn.last_error is None
    assert turn.report_md is not None


def test_unknown_op_is_returned_with_valid_choices(tmp_path: Path, sales: pd.DataFrame) -> None:
    replies = [
        Decision(next_action="act", rationale="x", analysis_spec={"op": "pivot_table"}),
        Decision(
            next_action="ask", rationale="どうしますか", clarifying_questions=["集計の列は？"]
        ),
    ]
    with make_agent(tmp_path, replies) as agent:
        dataset_id = agent.registry.add_frame(sales, "sales.csv")
        turn = agent.ask("ピボットして", dataset_id=dataset_id)
        error = json.loads(turn.last_error or "{}")
    assert error["code"] == "SPEC_ERROR"
    assert "groupby_agg" in error["details"]["valid"]


def test_act_without_a_spec_explains_in_japanese(tmp_path: Path, sales: pd.DataFrame) -> None:
    replies = [
        Decision(next_action="act", rationale="x"),
        Decision(
            next_action="ask", rationale="どうしますか", clarifying_questions=["集計の列は？"]
        ),
    ]
    with make_agent(tmp_path, replies) as agent:
        dataset_id = agent.registry.add_frame(sales, "sales.csv")
        turn = agent.ask("集計して", dataset_id=dataset_id)
        error = json.loads(turn.last_error or "{}")
    assert error["code"] == "SPEC_ERROR"
    assert "analysis_spec" in error["hint"] and "plot_spec" in error["hint"]
    assert "next_action was" not in error["message"]
    assert "集計" in error["message"] or "グラフ" in error["message"]


def test_step_cap_stops_a_runaway_loop(tmp_path: Path, sales: pd.DataFrame) -> None:
    overview = {"type": "analysis", "op": "dataset_overview"}
    replies: list[object] = [
        Decision(next_action="act", rationale="again", analysis_spec=overview)
    ] * 3 + [ReportProse(conclusions=["概要を確認しました"])]
    with make_agent(tmp_path, replies, max_steps_per_turn=3) as agent:
        dataset_id = agent.registry.add_frame(sales, "sales.csv")
        turn = agent.ask("概要", dataset_id=dataset_id)
    assert "上限（3 ステップ）" in (turn.report_md or "") or "上限（3 ステップ）" in turn.reply
    assert len(turn.actions) == 3
    assert turn.next_action == "finalize"  # results so far are reported


def test_action_over_time_limit_is_reported_and_dataset_survives(
    tmp_path: Path, sales: pd.DataFrame
) -> None:
    replies = [
        Decision(next_action="act", rationale="集計", analysis_spec=GROUPBY),
        Decision(
            next_action="ask", rationale="時間切れ", clarifying_questions=["条件を絞りますか？"]
        ),
    ]
    with make_agent(tmp_path, replies, analysis_timeout_s=0.0001) as agent:
        dataset_id = agent.registry.add_frame(sales, "sales.csv")
        turn = agent.ask("地域別の売上", dataset_id=dataset_id)
        assert json.loads(turn.last_error or "{}")["code"] == "ACTION_TIMEOUT"
        assert agent.registry.get(dataset_id).equals(sales)
        agent.settings = agent.settings.with_values(analysis_timeout_s=30.0)
        agent.actions.settings = agent.settings
        result = agent.run_specs([GROUPBY], dataset_id)
    assert result[0].artifacts


def test_llm_failure_raises_and_keeps_the_conversation(tmp_path: Path, sales: pd.DataFrame) -> None:
    bad = {"next_action": "dance", "rationale": "?"}
    replies: list[object] = [
        bad,
        bad,
        bad,
        Decision(next_action="ask", rationale="?", clarifying_questions=["もう一度どうぞ"]),
    ]
    with make_agent(tmp_path, replies) as agent:
        dataset_id = agent.registry.add_frame(sales, "sales.csv")
        with pytest.raises(LLMError):
            agent.ask("集計して", dataset_id=dataset_id, thread_id="t1")
        turn = agent.ask("地域別の売上", dataset_id=dataset_id, thread_id="t1")
        state = agent.graph.get_state({"configurable": {"thread_id": "t1"}}).values
    assert turn.reply.endswith("もう一度どうぞ")
    humans = [m.content for m in state["messages"] if isinstance(m, HumanMessage)]
    assert humans == ["集計して", "地域別の売上"]


def stub_settings(home: Path, server: StubOpenAIServer) -> Settings:
    """Settings that send the agent's model calls to the stub server on loopback."""
    return Settings(
        home=home, provider="openai-compatible", openai_api_base=server.base_url, max_retries=0
    )


def test_stub_server_path_through_real_openai_client(tmp_path: Path, sales: pd.DataFrame) -> None:
    replies = [
        Decision(next_action="act", rationale="集計", analysis_spec=GROUPBY),
        Decision(next_action="finalize", rationale="完了"),
        ReportProse(conclusions=["関東が最大"]),
    ]
    with StubOpenAIServer(replies) as server:
        with AnalysisAgent(stub_settings(tmp_path, server)) as agent:
            dataset_id = agent.registry.add_frame(sales, "sales.csv")
            turn = agent.ask("地域別の売上", dataset_id=dataset_id)
        paths = [request.path for request in server.requests]
    assert turn.offline is False
    assert len(paths) == 3 and all(path.endswith("/chat/completions") for path in paths)
    assert "関東が最大" in (turn.report_md or "")


CHILD = textwrap.dedent(
    """
    import json, sys
    import pandas as pd
    from keiri_agent.agents.analysis import AnalysisAgent
    from keiri_agent.agents.analysis.reasoning.decision import Decision
    from keiri_agent.agents.analysis.report import ReportProse
    from keiri_agent.config import Settings
    from keiri_agent.llm.testing import ScriptedChatModel

    step = sys.argv[1]
    spec = {"type": "analysis", "op": "groupby_agg", "group_cols": ["地域"],
            "metrics": {"売上": ["mean"]}}
    replies = {
        "first": [Decision(next_action="ask", rationale="指標?",
                           clarifying_questions=["どの指標を集計しますか？"])],
        "second": [Decision(next_action="act", rationale="平均", analysis_spec=spec),
                   Decision(next_action="finalize", rationale="完了"),
                   ReportProse(conclusions=["平均を集計しました"])],
    }[step]
    model = ScriptedChatModel(replies)
    frame = pd.DataFrame({"地域": ["関東", "関西"], "売上": [1.0, 3.0]})
    with AnalysisAgent(Settings(), chat_model=model) as agent:
        dataset_id = agent.registry.add_frame(frame, "s.csv")
        question = "地域別に集計して" if step == "first" else "売上の平均"
        turn = agent.ask(question, dataset_id=dataset_id, thread_id="thread-42")
    print(json.dumps({"next_action": turn.next_action, "prompt": model.prompts[0],
                      "report": turn.report_md}, ensure_ascii=False))
    """
)


def test_ask_answer_continue_on_one_thread_across_processes(tmp_path: Path) -> None:
    def run(step: str) -> dict[str, str]:
        done = subprocess.run(
            [sys.executable, "-c", CHILD, step],
            capture_output=True,
            text=True,
            check=True,
            cwd=tmp_path,
            env={
                "KEIRI_AGENT_HOME": str(tmp_path),
                "PATH": "/usr/bin:/bin",
                "OPENBLAS_NUM_THREADS": "1",
            },
        )
        return json.loads(done.stdout.strip().splitlines()[-1])

    first = run("first")
    assert first["next_action"] == "ask"
    second = run("second")
    assert second["next_action"] == "finalize"
    # The new process saw the earlier turn: the question and the answer are in its prompt.
    assert "地域別に集計して" in second["prompt"]
    assert "どの指標を集計しますか" in second["prompt"]
    assert "平均を集計しました" in second["report"]
    assert (tmp_path / ".keiri" / "checkpoints.db").exists()


def test_action_over_memory_limit_is_reported_and_dataset_survives(tmp_path: Path) -> None:
    rows = 300_000
    frame = pd.DataFrame(
        {"地域": ["関東", "近畿", "九州"] * (rows // 3), "売上": range(rows), "数量": range(rows)}
    )
    replies = [
        Decision(next_action="act", rationale="重複", analysis_spec={"op": "duplicate_check"}),
        Decision(
            next_action="ask", rationale="メモリ不足", clarifying_questions=["列を絞りますか？"]
        ),
    ]
    with make_agent(tmp_path, replies, analysis_memory_mb=2) as agent:
        dataset_id = agent.registry.add_frame(frame, "big.csv")
        turn = agent.ask("重複を確認して", dataset_id=dataset_id)
        error = json.loads(turn.last_error or "{}")
        assert error["code"] == "ACTION_MEMORY", error
        assert "列を絞りますか" in turn.reply
        assert agent.registry.get(dataset_id).equals(frame)


def test_llm_single_number_and_follow_up_through_the_stub_server(
    tmp_path: Path, sales: pd.DataFrame
) -> None:
    # the model is given the total op in its vocabulary and, on the follow-up, the spec
    # that answered the previous request; its reply runs as written
    total = {"type": "analysis", "op": "total", "metrics": {"売上": ["sum"]}}
    kanto = {**total, "filters": [{"col": "地域", "op": "==", "value": "関東"}]}
    replies = [
        Decision(next_action="act", rationale="合計", analysis_spec=total),
        Decision(next_action="finalize", rationale="完了"),
        ReportProse(conclusions=["売上の合計は900"]),
        Decision(next_action="act", rationale="前回の合計を関東に絞る", analysis_spec=kanto),
        Decision(next_action="finalize", rationale="完了"),
        ReportProse(conclusions=["関東の売上の合計は520"]),
    ]
    with StubOpenAIServer(replies) as server:
        with AnalysisAgent(stub_settings(tmp_path, server)) as agent:
            dataset_id = agent.registry.add_frame(sales, "sales.csv")
            first = agent.ask("売上の合計は？", dataset_id=dataset_id, thread_id="t")
            second = agent.ask("それを関東だけで", dataset_id=dataset_id, thread_id="t")
        prompts = [
            "\n".join(str(m.get("content")) for m in request.body["messages"])
            for request in server.requests
        ]
    assert "- total: One number for the whole table" in prompts[0]  # the vocabulary
    assert 'is a "total"' in prompts[0]  # and the rule for one number
    previous = prompts[3].split("Specs that answered the previous request")[1]
    assert '"op": "total"' in previous.split("\n\n")[0].split("\n", 1)[1]
    table = next(a for a in second.artifacts if a["kind"] == "table")["payload"]
    assert table["records"][0]["売上_sum"] == sales[sales["地域"] == "関東"]["売上"].sum()
    assert first.actions[-1]["spec"]["op"] == "total"
