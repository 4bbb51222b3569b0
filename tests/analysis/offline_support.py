"""What the offline-reasoner tests share: a made-up dataset's summary, the reasoner's
first decision on a request (or on a follow-up), and the spec it acts on."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import HumanMessage

from keiri_agent.agents.analysis.messages import agent_message
from keiri_agent.agents.analysis.reasoning.decision import Decision, ReasonInput
from keiri_agent.agents.analysis.reasoning.offline.reasoner import OfflineReasoner


def dataset_summary(
    rows: int, columns: list[tuple[str, str, list[str], int]], dataset_id: str
) -> dict[str, Any]:
    """A dataset summary as the registry writes it; ``columns`` are ``(name, kind,
    examples, unique)``, none with missing values."""
    return {
        "dataset_id": dataset_id,
        "name": f"{dataset_id}.csv",
        "rows": rows,
        "columns": [
            {"name": n, "kind": k, "missing": 0, "unique": u, "examples": e}
            for n, k, e, u in columns
        ],
    }


def decide(text: str, dataset: dict[str, Any]) -> Decision:
    """The offline reasoner's first decision on ``text`` about ``dataset``."""
    return OfflineReasoner().decide(
        ReasonInput(
            messages=[HumanMessage(text)],
            dataset_id=dataset["dataset_id"],
            dataset_summary=dataset,
        )
    )


def spec_of(decision: Decision) -> dict[str, Any]:
    """The spec a decision acts on (it must act)."""
    assert decision.next_action == "act", (decision.next_action, decision.clarifying_questions)
    spec = decision.analysis_spec or decision.plot_spec
    assert spec is not None
    return spec


def acted_spec(text: str, dataset: dict[str, Any]) -> dict[str, Any]:
    """The spec the reasoner acts on for ``text`` (it must act)."""
    return spec_of(decide(text, dataset))


def decide_after(
    earlier: str, spec: dict[str, Any], text: str, dataset: dict[str, Any]
) -> Decision:
    """The decision on ``text`` right after ``earlier`` was answered by ``spec``."""
    return OfflineReasoner().decide(
        ReasonInput(
            messages=[
                HumanMessage(earlier),
                agent_message("（回答済み）", "report"),
                HumanMessage(text),
            ],
            dataset_id=dataset["dataset_id"],
            dataset_summary=dataset,
            previous_specs=[spec],
        )
    )
