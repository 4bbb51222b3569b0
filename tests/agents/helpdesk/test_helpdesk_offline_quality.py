"""Offline answers over every attempt, the most specific term, fact-bearing quotes."""

from __future__ import annotations

from keiri_agent.agents.helpdesk.models import SearchOutput, ToolResult
from keiri_agent.agents.helpdesk.offline_reasoner import OfflineReasoner
from keiri_agent.agents.helpdesk.reasoner import SubtaskStep
from keiri_agent.agents.helpdesk.state import subtask_step

GOOD = SearchOutput(
    file_name="manual.pdf",
    page=4,
    heading="5.2 リモート接続",
    content="社外から接続するときは、VPNクライアントとワンタイムコードが必要です。",
    score=2.0,
)
OTHER = SearchOutput(
    file_name="manual.pdf",
    page=9,
    heading="8. 帳票",
    content="帳票は月次で出力されます。",
    score=1.0,
)


def _result(*outputs: SearchOutput) -> ToolResult:
    return ToolResult(tool_name="search_manual", args="{}", results=list(outputs))


def test_offline_answer_keeps_a_passage_found_in_an_earlier_attempt() -> None:
    reasoner = OfflineReasoner([])
    step = SubtaskStep(
        question="社外から接続するときにVPNは必要ですか",
        plan=[],
        subtask="社外から接続するときにVPNは必要ですか",
        attempt=2,
        messages=[],
        results=[_result(OTHER)],
        earlier_results=[_result(GOOD)],
    )
    answer = reasoner.answer_subtask(step)
    assert "VPNクライアントとワンタイムコード" in answer.answer
    assert answer.sources == ["manual.pdf p.4 「5.2 リモート接続」"]
    assert reasoner.reflect(step).result.is_completed


def test_subtask_step_carries_the_earlier_attempts_results() -> None:
    state = {
        "question": "q",
        "subtask": "q",
        "challenge_count": 2,
        "tool_results": [[_result(GOOD)], [], [_result(OTHER)]],
    }
    step = subtask_step(state, searched=True)  # type: ignore[arg-type]
    assert [r.results for r in step.results] == [[OTHER]]
    assert [r.results for r in step.earlier_results] == [[GOOD]]
    assert subtask_step(state).earlier_results == []  # type: ignore[arg-type]
