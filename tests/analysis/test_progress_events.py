"""``AnalysisAgent.ask(on_event=...)`` emits the shared ``Event``: one per graph step,
numbered per turn, with small JSON-safe payloads (no frames, messages or figures)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from keiri_agent.agents.analysis import AnalysisAgent
from keiri_agent.agents.analysis.reasoning.decision import Decision
from keiri_agent.agents.analysis.report import ReportProse
from keiri_agent.config import Settings
from keiri_agent.events import Event
from keiri_agent.llm.testing import ScriptedChatModel

GROUPBY = {
    "type": "analysis",
    "op": "groupby_agg",
    "group_cols": ["地域"],
    "metrics": {"売上": ["sum"]},
}
WRONG = {**GROUPBY, "group_cols": ["地区"]}
SALES = pd.DataFrame({"地域": ["関東", "関西", "関東"], "売上": [100.0, 250.0, 300.0]})


def test_one_event_per_step_numbered_per_turn(tmp_path: Path) -> None:
    replies = [
        Decision(next_action="act", rationale="集計（列名を誤る）", analysis_spec=WRONG),
        Decision(next_action="act", rationale="集計する", analysis_spec=GROUPBY),
        Decision(next_action="finalize", rationale="完了"),
        ReportProse(conclusions=["関東が最大"], suggestions=[]),
        Decision(next_action="ask", rationale="次は?", clarifying_questions=["何を見ますか"]),
    ]
    events: list[Event] = []
    with AnalysisAgent(Settings(home=tmp_path), chat_model=ScriptedChatModel(replies)) as agent:
        dataset_id = agent.registry.add_frame(SALES, "sales.csv")
        turn = agent.ask("地域別の売上", dataset_id=dataset_id, on_event=events.append)
        first = list(events)
        events.clear()
        second = agent.ask(
            "続けて", dataset_id=dataset_id, thread_id=turn.thread_id, on_event=events.append
        )

    assert [e.kind for e in first] == ["reason", "act", "reason", "act", "reason", "report"]
    assert {(e.source, e.run_id) for e in first} == {("analysis", turn.turn_id)}
    assert [e.seq for e in first] == list(range(1, 7))
    for event in first:
        assert json.loads(json.dumps(event.to_dict())) == event.to_dict()  # JSON-safe
        assert event.payload["thread_id"] == turn.thread_id
    reason = first[0].payload
    assert (reason["step"], reason["next_action"]) == (1, "act")
    assert reason["rationale"] == "集計（列名を誤る）"
    failed, done = first[1].payload["actions"], first[3].payload["actions"]
    assert failed[0]["ok"] is False and failed[0]["error"]["code"]
    assert failed[0]["name"] == "groupby_agg" and failed[0]["spec_type"] == "analysis"
    assert done[0]["ok"] is True
    assert done[0]["artifact_ids"] == [a["artifact_id"] for a in turn.artifacts]
    assert done[0]["titles"] == [a["title"] for a in turn.artifacts]
    assert first[5].payload["report_chars"] == len(turn.report_md or "")

    # the next turn of the thread is a new run: its own id, numbered from 1 again
    assert second.turn_id != turn.turn_id
    assert [(e.kind, e.seq, e.run_id) for e in events] == [("reason", 1, second.turn_id)]
    assert events[0].payload["questions"] == ["何を見ますか"]
