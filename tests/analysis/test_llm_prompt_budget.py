"""The LLM reason prompt stays bounded as the data widens and still carries what the model
needs: columns the request names (or whose values it names, or that ran) in full, every
other column by name and kind, and the whole spec vocabulary in compact form."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from langchain_core.messages import HumanMessage

from keiri_agent.agents.analysis import AnalysisAgent
from keiri_agent.agents.analysis.datasets.summary import (
    estimate_tokens,
    prompt_summary,
    summarize,
)
from keiri_agent.agents.analysis.ops.specs import analysis_spec_json_schema, plot_spec_json_schema
from keiri_agent.agents.analysis.reasoning.decision import ActionRecord, Decision, ReasonInput
from keiri_agent.agents.analysis.reasoning.llm_reasoner import LLMReasoner
from keiri_agent.agents.analysis.report import ReportProse
from keiri_agent.config import Settings
from keiri_agent.llm.testing import ScriptedChatModel


def ledger(width: int, rows: int = 120) -> pd.DataFrame:
    """A made-up ledger export: 地域/売上/日付 and filler columns up to ``width``."""
    rng = np.random.default_rng(3)
    frame = pd.DataFrame(
        {
            "地域": rng.choice(["関東", "関西", "九州"], rows),
            "売上": rng.integers(100, 10_000, rows),
            "日付": pd.Timestamp("2025-01-01") + pd.to_timedelta(rng.integers(0, 90, rows), "D"),
        }
    )
    extra: dict[str, object] = {}
    for index in range(width - 3):
        if index % 3 == 0:
            extra[f"部門コード_{index}"] = rng.choice([f"D{n}" for n in range(4)], rows)
        elif index % 3 == 1:
            extra[f"勘定科目_{index}_金額"] = rng.normal(0, 1000, rows).round(0)
        else:
            extra[f"摘要_{index}"] = [f"摘要-{n}" for n in rng.integers(0, 10**6, rows)]
    frame = pd.concat([frame, pd.DataFrame(extra)], axis=1)
    frame.loc[0, "部門コード_300"] = "特別監査室"
    return frame


def expand(entries: list[str]) -> set[str]:
    """The column names a listing stands for (``name_series`` entries unfolded)."""
    names: set[str] = set()
    for entry in entries:
        if " (n=" not in entry:
            names.add(entry)
            continue
        template, numbers = entry.removesuffix(")").split(" (n=")
        for part in numbers.split(","):
            first, _, last = part.partition("..")
            for number in range(int(first), int(last or first) + 1):
                names.add(template.replace("{n}", str(number).zfill(len(first))))
    return names


def reason_prompt(frame: pd.DataFrame, request: str, **state: object) -> str:
    summary = summarize(frame, "ds_1", "ledger.csv")
    reasoner = LLMReasoner(ScriptedChatModel())
    messages = reasoner.prompt(
        ReasonInput(
            messages=[HumanMessage(request)],
            dataset_id="ds_1",
            dataset_summary=summary,
            **state,  # type: ignore[arg-type]
        )
    )
    return "\n".join(str(message.content) for message in messages)


def test_reason_prompt_grows_at_most_twofold_from_12_to_400_columns() -> None:
    request = "地域別の売上の合計を見せて"
    narrow = estimate_tokens(reason_prompt(ledger(12), request))
    wide = estimate_tokens(reason_prompt(ledger(400), request))
    assert narrow <= 6000
    assert wide <= 2 * narrow


def test_column_named_in_the_request_is_in_full_at_400_columns(tmp_path: Path) -> None:
    frame = ledger(400)
    model = ScriptedChatModel(
        [
            Decision(
                next_action="act",
                rationale="集計する",
                analysis_spec={
                    "type": "analysis",
                    "op": "groupby_agg",
                    "group_cols": ["部門コード_150"],
                    "metrics": {"勘定科目_151_金額": ["sum"]},
                },
            ),
            Decision(next_action="finalize", rationale="完了"),
            ReportProse(conclusions=["部門別に集計しました（表1）。"]),
        ]
    )
    with AnalysisAgent(Settings(home=tmp_path), chat_model=model) as agent:
        dataset_id = agent.registry.add_frame(frame, "ledger.csv")
        turn = agent.ask("部門コード_150 別の勘定科目_151_金額の合計", dataset_id=dataset_id)
    assert turn.next_action == "finalize"
    first, second = (call[1].content for call in model.calls[:2])
    for context in (first, second):
        summary = json.loads(str(context).split("\n\n")[0].removeprefix("Dataset summary:\n"))
        full = {column["name"]: column for column in summary["columns"]}
        assert full["部門コード_150"]["values"] == ["D0", "D1", "D2", "D3"] or set(
            full["部門コード_150"]["values"]
        ) == {"D0", "D1", "D2", "D3"}
        assert "勘定科目_151_金額" in full
        listed = {name for names in summary["other_columns"].values() for name in expand(names)}
        assert listed | set(full) == {str(c) for c in frame.columns}
        assert "部門コード_297" in expand(summary["other_columns"]["categorical"])


def test_a_value_named_in_the_request_brings_its_column_in_full() -> None:
    frame = ledger(400)
    view = prompt_summary(summarize(frame, "ds_1", "l.csv"), "特別監査室の件数")
    assert "部門コード_300" in [column["name"] for column in view["columns"]]


def test_columns_of_specs_that_ran_are_in_full_when_finalizing() -> None:
    spec = {
        "type": "analysis",
        "op": "groupby_agg",
        "group_cols": ["部門コード_210"],
        "metrics": {"勘定科目_211_金額": ["sum"]},
    }
    text = reason_prompt(
        ledger(400),
        "さっきの続きでまとめて",
        turn_actions=[ActionRecord(spec=spec, ok=True, artifact_ids=("a1",))],
    )
    summary = json.loads(text.split("Dataset summary:\n")[1].split("\n\n")[0])
    assert {"部門コード_210", "勘定科目_211_金額"} <= {c["name"] for c in summary["columns"]}


def test_narrow_summary_is_sent_whole() -> None:
    summary = summarize(ledger(12), "ds_1", "l.csv")
    assert prompt_summary(summary, "何か") == summary


@pytest.mark.parametrize("schema", [analysis_spec_json_schema(), plot_spec_json_schema()])
def test_compact_vocabulary_keeps_every_op_field_and_choice(schema: dict[str, object]) -> None:
    system = str(LLMReasoner(ScriptedChatModel()).prompt(ReasonInput([], None, None))[0].content)
    defs = schema["$defs"]
    assert isinstance(defs, dict)
    for definition in defs.values():
        for name, node in definition.get("properties", {}).items():
            if name in {"dataset_id", "type"}:
                continue
            assert f"{name}" in system
            for choice in node.get("enum", []):
                assert json.dumps(choice) in system
            if "const" in node:
                assert f"- {node['const']}:" in system
    assert len(system) < len(json.dumps(schema)) + 4000
