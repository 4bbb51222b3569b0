"""Accuracy of the offline (rule-based) reasoner on hand-written requests.

Each line of ``data/offline_requests.jsonl`` is a request as a user would type it,
the column set it is asked against ("ja": 注文ID, 日付, 地域, ...; "en": order_id,
date, region, ...) and the expected first decision: ``next_action``, the ``op`` or
``kind`` of the spec, the columns the spec names (filters aside) and, for some,
the filters. Run::

    uv run python benchmarks/offline_reasoner_accuracy.py

It prints ``name: value`` lines and the failures. ``evaluate()`` is importable
(the test suite asserts the overall accuracy stays ≥ 0.9).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langchain_core.messages import HumanMessage

from keiri_agent.agents.analysis.ops.specs import (
    check_columns,
    parse_analysis_spec,
    parse_plot_spec,
    referenced_columns,
)
from keiri_agent.agents.analysis.reasoning.decision import Decision, ReasonInput
from keiri_agent.agents.analysis.reasoning.offline.parser import is_japanese
from keiri_agent.agents.analysis.reasoning.offline.reasoner import OfflineReasoner

DATA = Path(__file__).parent / "data" / "offline_requests.jsonl"

# (ja name, en name, kind, examples)
_COLUMNS = [
    ("注文ID", "order_id", "text", ["ORD-000001", "ORD-000002"], ["ORD-000001", "ORD-000002"]),
    ("日付", "date", "datetime", ["2024-01-01", "2025-06-30"], ["2024-01-01", "2025-06-30"]),
    (
        "地域",
        "region",
        "categorical",
        ["関東", "関西", "中部", "九州", "東北"],
        ["Kanto", "Kansai", "Chubu", "Kyushu", "Tohoku"],
    ),
    (
        "店舗",
        "store",
        "categorical",
        ["新宿店", "梅田店", "名古屋店", "博多店", "大宮店"],
        ["Shinjuku", "Umeda", "Nagoya", "Hakata", "Omiya"],
    ),
    (
        "商品カテゴリ",
        "category",
        "categorical",
        ["IT機器", "文房具", "消耗品", "家具"],
        ["IT equipment", "Stationery", "Supplies", "Furniture"],
    ),
    (
        "商品名",
        "product",
        "categorical",
        ["ノートPC", "マウス", "トナー", "ノート", "チェア"],
        ["Laptop", "Mouse", "Toner", "Notebook", "Chair"],
    ),
    ("数量", "quantity", "numeric", ["5", "88", "7"], ["5", "88", "7"]),
    ("単価", "unit_price", "numeric", ["128000", "180", "2480"], ["128000", "180", "2480"]),
    ("売上", "sales", "numeric", ["640000", "15840"], ["640000", "15840"]),
    ("値引額", "discount", "numeric", ["0", "1740"], ["0", "1740"]),
    (
        "担当者",
        "staff",
        "categorical",
        ["小林", "田中", "山本", "佐藤"],
        ["Kobayashi", "Tanaka", "Yamamoto", "Sato"],
    ),
    ("顧客区分", "customer_type", "categorical", ["法人", "個人"], ["corporate", "individual"]),
]
_DTYPES = {
    "text": "object",
    "datetime": "datetime64[ns]",
    "categorical": "object",
    "numeric": "int64",
}


def summary(columns_set: str) -> dict[str, Any]:
    """A dataset summary of the sample sales data with Japanese ("ja") or English ("en") headers."""
    english = columns_set == "en"
    columns = [
        {
            "name": en if english else ja,
            "dtype": _DTYPES[kind],
            "kind": kind,
            "missing": 3 if (en == "discount") else 0,
            "unique": len(ex_en) * 10,
            "examples": ex_en if english else ex_ja,
        }
        for ja, en, kind, ex_ja, ex_en in _COLUMNS
    ]
    return {
        "dataset_id": f"ds_{columns_set}",
        "name": f"sales_{columns_set}.csv",
        "rows": 1200,
        "columns": columns,
        "memory_mb": 0.4,
    }


def load_cases(path: Path = DATA) -> list[dict[str, Any]]:
    """The benchmark cases, one JSON object per line."""
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def spec_columns(spec: dict[str, Any]) -> set[str]:
    """Columns a spec names, filters aside."""
    model = parse_plot_spec(spec) if "kind" in spec else parse_analysis_spec(spec)
    return {col for where, col in referenced_columns(model) if not where.startswith("filters")}


@dataclass
class Outcome:
    """One case: the decision and which parts matched."""

    case: dict[str, Any]
    decision: Decision
    checks: dict[str, bool] = field(default_factory=dict)
    valid: bool = True

    @property
    def ok(self) -> bool:
        return self.valid and all(self.checks.values())


def run_case(case: dict[str, Any], reasoner: OfflineReasoner | None = None) -> Outcome:
    """Decide on one request and compare with the expectation."""
    data = summary(case["columns_set"])
    state = ReasonInput(
        messages=[HumanMessage(case["text"])], dataset_id=data["dataset_id"], dataset_summary=data
    )
    decision = (reasoner or OfflineReasoner()).decide(state)
    expected = case["expected"]
    spec = decision.analysis_spec or decision.plot_spec
    outcome = Outcome(case, decision)
    outcome.checks["next_action"] = decision.next_action == expected["next_action"]
    if spec is not None:
        try:
            model = parse_plot_spec(spec) if "kind" in spec else parse_analysis_spec(spec)
            check_columns(model, [c["name"] for c in data["columns"]])
        except Exception:  # any failure makes the spec invalid
            outcome.valid = False
    if "op" in expected or "kind" in expected:
        got = (spec or {}).get("op") or (spec or {}).get("kind")
        outcome.checks["op_kind"] = got == (expected.get("op") or expected.get("kind"))
    if "columns" in expected:
        got_cols = spec_columns(spec) if spec and outcome.valid else set()
        outcome.checks["columns"] = spec is not None and got_cols == set(expected["columns"])
    if "filters" in expected:
        key = lambda f: json.dumps(f, sort_keys=True, ensure_ascii=False)  # noqa: E731
        got_filters = sorted(map(key, (spec or {}).get("filters") or []))
        outcome.checks["filters"] = got_filters == sorted(map(key, expected["filters"]))
    return outcome


def _ratio(items: list[bool]) -> float:
    return round(sum(items) / len(items), 3) if items else 1.0


def evaluate(cases: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """Run every case; returns the figures and the failing outcomes."""
    outcomes = [run_case(case) for case in (cases if cases is not None else load_cases())]
    by_lang: dict[str, list[bool]] = {"ja": [], "en": []}
    for outcome in outcomes:
        by_lang["ja" if is_japanese(outcome.case["text"]) else "en"].append(outcome.ok)

    def part(name: str) -> float:
        return _ratio([o.checks[name] for o in outcomes if name in o.checks])

    return {
        "cases": len(outcomes),
        "accuracy": _ratio([o.ok for o in outcomes]),
        "next_action_accuracy": part("next_action"),
        "op_kind_accuracy": part("op_kind"),
        "columns_accuracy": part("columns"),
        "filters_accuracy": part("filters"),
        "ja_accuracy": _ratio(by_lang["ja"]),
        "en_accuracy": _ratio(by_lang["en"]),
        "ja_cases": len(by_lang["ja"]),
        "en_cases": len(by_lang["en"]),
        "invalid_specs": sum(not o.valid for o in outcomes),
        "failures": [o for o in outcomes if not o.ok],
    }


def main() -> None:
    """Print the figures as ``name: value`` lines, then the failures."""
    result = evaluate()
    for name, value in result.items():
        if name != "failures":
            print(f"{name}: {value}")
    print(f"failures: {len(result['failures'])}")
    for outcome in result["failures"]:
        spec = outcome.decision.analysis_spec or outcome.decision.plot_spec
        failed = [name for name, ok in outcome.checks.items() if not ok] or ["invalid spec"]
        got = {
            "next_action": outcome.decision.next_action,
            "spec": spec,
            "questions": outcome.decision.clarifying_questions,
        }
        print(
            f"- [{outcome.case['columns_set']}] {outcome.case['text']!r} failed {failed}: "
            f"expected {json.dumps(outcome.case['expected'], ensure_ascii=False)}; "
            f"got {json.dumps(got, ensure_ascii=False)}"
        )


if __name__ == "__main__":
    main()
