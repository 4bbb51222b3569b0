"""Edge cases of the analysis executor and the act node found in review.

User columns named like result columns (件数, 構成比, 列), group keys mixing numbers
and text (Excel codes 101 / "A01"), negative totals in share_ratio, and an
unexpected exception inside an action, which must reach ``last_error``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from keiri_agent.agents.analysis import AnalysisAgent
from keiri_agent.agents.analysis.artifacts import ActionResult
from keiri_agent.agents.analysis.formatting import MISSING_LABEL
from keiri_agent.agents.analysis.ops import executor
from keiri_agent.agents.analysis.ops.executor import run_analysis
from keiri_agent.agents.analysis.ops.results import unique_name
from keiri_agent.agents.analysis.ops.specs import parse_analysis_spec
from keiri_agent.agents.analysis.reasoning.decision import Decision
from keiri_agent.config import Settings
from keiri_agent.errors import ExecutionError, SpecError
from keiri_agent.llm.testing import ScriptedChatModel


def analyse(frame: pd.DataFrame, **raw: Any) -> ActionResult:
    return run_analysis(parse_analysis_spec({"type": "analysis", **raw}), frame)


def records(result: ActionResult, index: int = 0) -> list[dict[str, Any]]:
    payload = [a for a in result.artifacts if a["kind"] == "table"][index]["payload"]
    assert isinstance(payload, dict)
    return payload["records"]  # type: ignore[no-any-return]


def text_of(result: ActionResult) -> str:
    (text,) = [a["payload"] for a in result.artifacts if a["kind"] == "text"]
    assert isinstance(text, str)
    return text


@pytest.fixture
def counted() -> pd.DataFrame:
    """A ledger that already has a column named 件数 (like /tmp cnt.csv in the review)."""
    return pd.DataFrame(
        {
            "取引先": ["A社", "B社", "A社", "C社", "B社"],
            "件数": [3, 5, 3, 1, 5],
            "金額": [1000, 2000, 1000, 500, 2000],
        }
    )


def test_unique_name_adds_a_free_suffix() -> None:
    assert unique_name(["取引先"], "件数") == "件数"
    assert unique_name(["件数"], "件数") == "件数_2"
    assert unique_name(["件数", "件数_2"], "件数") == "件数_3"


# --- bug 1: result columns must not collide with the user's columns ---------------


def test_duplicate_check_with_a_user_column_named_count(counted: pd.DataFrame) -> None:
    result = analyse(counted, op="duplicate_check")
    rows = records(result)
    assert rows == [
        {"取引先": "A社", "件数": 3, "金額": 1000, "件数_2": 2},
        {"取引先": "B社", "件数": 5, "金額": 2000, "件数_2": 2},
    ]
    assert "重複: 2 行" in text_of(result)


def test_share_ratio_grouped_by_a_column_named_like_its_results(
    counted: pd.DataFrame,
) -> None:
    by_count = records(analyse(counted, op="share_ratio", group_col="件数"))
    assert [(r["件数"], r["件数_2"]) for r in by_count] == [(3, 2), (5, 2), (1, 1)]
    assert by_count[-1]["累積構成比"] == pytest.approx(1.0)

    frame = pd.DataFrame({"構成比": ["x", "y", "x"], "金額": [1.0, 3.0, 4.0]})
    rows = records(analyse(frame, op="share_ratio", group_col="構成比", value_col="金額"))
    assert rows == [
        {"構成比": "x", "金額_sum": 5.0, "構成比_2": 0.625, "累積構成比": 0.625},
        {"構成比": "y", "金額_sum": 3.0, "構成比_2": 0.375, "累積構成比": 1.0},
    ]


def test_correlation_with_a_numeric_column_named_like_the_label_column() -> None:
    frame = pd.DataFrame({"列": [1.0, 2.0, 3.0, 4.0], "金額": [2.0, 4.0, 6.0, 9.0]})
    rows = records(analyse(frame, op="correlation_matrix"))
    assert [r["列_2"] for r in rows] == ["列", "金額"]
    assert rows[0]["列"] == pytest.approx(1.0)


# --- bug 2: group keys mixing numbers and text --------------------------------------


@pytest.fixture
def mixed_codes() -> pd.DataFrame:
    """Department codes as read from Excel: ints and strings in one object column."""
    return pd.DataFrame(
        {
            "部門コード": pd.Series([101, "A01", 102, 101, None, "B02"], dtype=object),
            "金額": [1000, 2000, 1500, 1200, 300, 700],
        }
    )


def test_groupby_agg_groups_and_sorts_mixed_keys(mixed_codes: pd.DataFrame) -> None:
    result = analyse(
        mixed_codes, op="groupby_agg", group_cols=["部門コード"], metrics={"金額": ["sum"]}
    )
    rows = records(result)
    # numbers first in numeric order, then text, missing last
    assert [r["部門コード"] for r in rows] == [101, 102, "A01", "B02", None]
    assert [r["金額_sum"] for r in rows] == [2200, 1500, 2000, 700, 300]
    assert "最大: 101（金額（合計）=2,200）" in text_of(result)


def test_groupby_agg_sorted_by_a_mixed_group_column(mixed_codes: pd.DataFrame) -> None:
    result = analyse(
        mixed_codes,
        op="groupby_agg",
        group_cols=["部門コード"],
        metrics={"金額": ["count"]},
        sort={"by": "部門コード", "ascending": False},
    )
    assert [r["部門コード"] for r in records(result)] == ["B02", "A01", 102, 101, None]


# --- bug 4: share_ratio with negative totals, and the missing-group label ------------


def test_share_ratio_rejects_negative_group_totals() -> None:
    frame = pd.DataFrame({"取引先": ["A社", "B社(返品)", "C社"], "金額": [100, -100, 1]})
    with pytest.raises(SpecError) as caught:
        analyse(frame, op="share_ratio", group_col="取引先", value_col="金額")
    assert "マイナス" in caught.value.message and "構成比" in caught.value.message
    assert "B社(返品)" in caught.value.message
    assert caught.value.hint and "groupby_agg" in caught.value.hint


def test_share_ratio_allows_negative_rows_when_every_group_total_is_positive() -> None:
    frame = pd.DataFrame({"取引先": ["A社", "A社", "C社"], "金額": [100, -40, 20]})
    rows = records(analyse(frame, op="share_ratio", group_col="取引先", value_col="金額"))
    assert [(r["取引先"], r["構成比"]) for r in rows] == [("A社", 0.75), ("C社", 0.25)]


def test_share_ratio_text_labels_the_missing_group() -> None:
    frame = pd.DataFrame({"部門": ["営業", "営業", None], "金額": [100.0, 200.0, 50.0]})
    text = text_of(analyse(frame, op="share_ratio", group_col="部門", value_col="金額"))
    assert f"{MISSING_LABEL} 50・14.3% は順位から除いています" in text  # beside, not ranked
    assert "nan" not in text and "None" not in text


# --- bug 3: an unexpected exception in an action is reported, not raised --------------


def _boom(spec: Any, data: pd.DataFrame) -> Any:
    raise RuntimeError("boom in the template code")


GROUPBY = {
    "type": "analysis",
    "op": "groupby_agg",
    "group_cols": ["地域"],
    "metrics": {"売上": ["sum"]},
}


@pytest.mark.parametrize("isolation", [True, False])
def test_unexpected_action_error_reaches_last_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, isolation: bool
) -> None:
    monkeypatch.setitem(executor._HANDLERS, "groupby_agg", _boom)
    frame = pd.DataFrame({"地域": ["関東", "関西"], "売上": [100.0, 200.0]})
    replies = [
        Decision(next_action="act", rationale="集計", analysis_spec=GROUPBY),
        Decision(
            next_action="ask",
            rationale="集計に失敗した",
            clarifying_questions=["集計に失敗しました。条件を変えますか？"],
        ),
    ]
    model = ScriptedChatModel(replies)
    settings = Settings(home=tmp_path, analysis_isolation=isolation)  # type: ignore[arg-type]
    with AnalysisAgent(settings, chat_model=model) as agent:
        dataset_id = agent.registry.add_frame(frame, "sales.csv")
        turn = agent.ask("地域別の売上", dataset_id=dataset_id)
        error = json.loads(turn.last_error or "{}")
        assert error["code"] == "ACTION_FAILED"
        assert "RuntimeError" in error["message"] and "boom" in error["message"]
        assert error["hint"]
        assert [a["ok"] for a in turn.actions] == [False]
        assert turn.next_action == "ask"
        assert "集計に失敗しました" in turn.reply
        assert "ACTION_FAILED" in model.prompts[1]  # the reasoner saw the error

        with pytest.raises(ExecutionError) as caught:
            agent.run_specs([GROUPBY], dataset_id)
    assert caught.value.code == "ACTION_FAILED"
    assert isinstance(caught.value.__cause__, RuntimeError)


def test_a_top_n_leaves_the_blank_group_out_and_reports_it_beside() -> None:
    frame = pd.DataFrame(
        {"取引先": ["A社", None, "B社", None, "C社", "A社"], "金額": [100, 500, 50, 300, 20, 10]}
    )
    result = analyse(
        frame,
        op="groupby_agg",
        group_cols=["取引先"],
        metrics={"金額": ["sum"], "取引先": ["count"]},
        sort={"by": "金額_sum", "ascending": False},
        top_k=2,
    )
    assert [r["取引先"] for r in records(result)] == ["A社", "B社"]
    text = text_of(result)
    assert "(欠損) 2 件・金額（合計）=800 は順位から除いています" in text
    assert "最大: A社" in text
    whole = analyse(frame, op="groupby_agg", group_cols=["取引先"], metrics={"取引先": ["count"]})
    counts = {r["取引先"]: r["取引先_count"] for r in records(whole)}
    assert counts[None] == 2  # the blank group's rows, not its non-null count
