"""The held-out request sets of ``benchmarks/offline_reasoner_accuracy.py`` are honest.

The held-out sets (``heldout``, the second ``fresh``, the third ``unseen``, the
fourth ``blind``, the fifth ``blind2``, the sixth ``blind3`` and the seventh
``blind4``) measure the offline
reasoner on requests it was never tuned on; these tests do not run the reasoner. They
check the labels: every acting case carries a reference spec that is valid against its
dataset's columns and meets every expectation of the case, the datasets are
well-formed summaries, and each set is large and varied enough (≥ 80 cases, Japanese
and English, ≥ 3 datasets, every request family of issue 16) and uses requests and
datasets no other set uses.
"""

from __future__ import annotations

import importlib.util
import sys
from collections import Counter
from itertools import combinations
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from keiri_agent.agents.analysis.ops.specs import (
    AGGREGATIONS,
    ANALYSIS_OPS,
    FILTER_OPS,
    PLOT_KINDS,
)
from keiri_agent.agents.analysis.reasoning.offline.parser import is_japanese

BENCHMARK = Path(__file__).resolve().parents[2] / "benchmarks" / "offline_reasoner_accuracy.py"
ACTIONS = ("act", "ask", "out_of_scope")
FAMILIES = (
    "column_words",
    "no_group_word",
    "unanswerable_clause",
    "correlation_pair",
    "missing_vs_mean",
    "numeric_group",
    "equality",
    "common_noun",
    "top_k_common",
    "for_each",
    "out_of_vocabulary",
)


def benchmark() -> ModuleType:
    spec = importlib.util.spec_from_file_location("offline_reasoner_accuracy_heldout", BENCHMARK)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


BENCH = benchmark()
# Each held-out set and the datasets it must cover.
HELDOUT_SETS = {
    "heldout": (
        BENCH.HELDOUT,
        {"ledger_ja", "ledger_en", "hr_ja", "hr_en", "weather_ja", "weather_en"},
    ),
    "fresh": (BENCH.FRESH, {"inventory_ja", "callcenter_ja", "crm_en", "meter_en"}),
    "unseen": (BENCH.UNSEEN, {"purchase_ja", "timesheet_ja", "hotel_en", "fleet_en"}),
    "blind": (BENCH.BLIND, {"receivable_ja", "fixedasset_ja", "orders_en", "clinic_en"}),
    "blind2": (
        BENCH.BLIND2,
        {"payroll_ja", "travel_ja", "shipments_en", "subscriptions_en"},
    ),
    "blind3": (
        BENCH.BLIND3,
        {"training_ja", "propertytax_ja", "pos_en", "library_en"},
    ),
    "blind4": (
        BENCH.BLIND4,
        {"maintenance_ja", "roombooking_ja", "gym_en", "helpdesk_en"},
    ),
}
SET_CASES = {name: BENCH.load_cases(path) for name, (path, _) in HELDOUT_SETS.items()}
CASES = [case for cases in SET_CASES.values() for case in cases]


def _id(case: dict[str, Any]) -> str:
    return f"{case['dataset']}:{case['text'][:40]}"


@pytest.mark.parametrize("set_name", sorted(HELDOUT_SETS))
def test_set_is_large_bilingual_and_spans_domains(set_name: str) -> None:
    cases = SET_CASES[set_name]
    assert len(cases) >= 80
    languages = Counter("ja" if is_japanese(c["text"]) else "en" for c in cases)
    assert min(languages["ja"], languages["en"]) >= 0.4 * len(cases), languages
    datasets = {c["dataset"] for c in cases}
    assert len(datasets) >= 3
    assert HELDOUT_SETS[set_name][1] <= datasets
    families = Counter(c["covers"] for c in cases)
    for family in FAMILIES:
        assert families[family] >= 3, family
    actions = Counter(a for c in cases for a in BENCH._one_of(c["expected"]["next_action"]))
    assert actions["ask"] >= 4 and actions["out_of_scope"] >= 10
    assert len({c["text"] for c in cases}) == len(cases), "duplicate request"


def test_sets_share_no_request_or_dataset() -> None:
    tuning = {c["text"] for c in BENCH.load_cases(BENCH.DATA)}
    texts = [{c["text"] for c in cases} for cases in SET_CASES.values()]
    assert not tuning & set().union(*texts)
    datasets = [{c["dataset"] for c in cases} for cases in SET_CASES.values()]
    for first, second in combinations(range(len(texts)), 2):
        assert not texts[first] & texts[second]
        assert not datasets[first] & datasets[second], "each held-out set uses new datasets"


@pytest.mark.parametrize("name", sorted({c["dataset"] for c in CASES}))
def test_dataset_summary_is_well_formed(name: str) -> None:
    data = BENCH.dataset_summary(name)
    assert data["dataset_id"] and data["name"] and data["rows"] > 0
    names = [c["name"] for c in data["columns"]]
    assert len(names) == len(set(names)) >= 5
    for column in data["columns"]:
        assert set(column) == {"name", "dtype", "kind", "missing", "unique", "examples"}
        assert column["kind"] in ("numeric", "datetime", "categorical", "text", "boolean")
        assert 0 <= column["missing"] < data["rows"] and 0 < column["unique"] <= data["rows"]
        assert column["examples"]


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_expectation_is_well_formed(case: dict[str, Any]) -> None:
    expected = case["expected"]
    assert set(expected) <= {"next_action", "op", "kind", "columns", "filters", "agg", "top_k"}
    actions = BENCH._one_of(expected["next_action"])
    assert set(actions) <= set(ACTIONS)
    if "act" in actions:
        assert actions == ["act"], "a case either acts or does not"
        assert "reference" in case
        ops = BENCH._one_of(expected.get("op") or expected.get("kind"))
        assert set(ops) <= set(ANALYSIS_OPS + PLOT_KINDS)
        assert "columns" in expected
    else:
        assert "reference" not in case
        assert set(expected) == {"next_action"}
    if "agg" in expected:
        assert expected["agg"] in AGGREGATIONS
    for condition in expected.get("filters", []):
        assert condition["op"] in FILTER_OPS


@pytest.mark.parametrize("case", [c for c in CASES if "reference" in c], ids=_id)
def test_reference_spec_is_valid_and_meets_the_expectation(case: dict[str, Any]) -> None:
    data = BENCH.case_summary(case)
    columns = [c["name"] for c in data["columns"]]
    expected = case["expected"]
    checks, valid = BENCH.compare(expected, "act", case["reference"], columns)
    assert valid, case["reference"]
    assert all(checks.values()), checks
    assert set(expected.get("columns", [])) <= set(columns)
    assert {f["col"] for f in expected.get("filters", [])} <= set(columns)


def test_a_wrong_label_is_caught() -> None:
    case = next(c for c in CASES if c["covers"] == "equality")
    data = BENCH.case_summary(case)
    columns = [c["name"] for c in data["columns"]]
    wrong = {**case["reference"], "filters": []}
    checks, valid = BENCH.compare(case["expected"], "act", wrong, columns)
    assert valid and not checks["filters"]
    unknown = {**case["reference"], "columns": ["no_such_column"]}
    assert not BENCH.compare(case["expected"], "act", unknown, columns)[1]


# The blind sets of issue 28 from the eighth on (written with this script's checks at
# hand; the fifth to seventh are kept as they were first scored, a few of their references
# short of their expectations): requests in the proportions a finance team asks them,
# follow-ups with the earlier turns and the spec that answered each.
ISSUE28_SETS = [f"blind{n}" for n in range(8, 53)]
ISSUE28_FAMILIES = ("single_number", "follow_up", "blank_category", "named_column")
ISSUE28_CASES = [case for name in ISSUE28_SETS for case in BENCH.load_cases(BENCH.SETS[name])]


@pytest.mark.parametrize("set_name", ISSUE28_SETS)
def test_issue28_set_is_large_and_has_each_family(set_name: str) -> None:
    cases = BENCH.load_cases(BENCH.SETS[set_name])
    assert len(cases) >= 100 and len({c["dataset"] for c in cases}) >= 4
    families = Counter(c["covers"] for c in cases)
    assert families["single_number"] >= 0.25 * len(cases)
    for family in ISSUE28_FAMILIES:
        assert families[family] >= 10, family
    follow_ups = [c for c in cases if c["covers"] == "follow_up"]
    assert all(c["history"] and all("spec" in turn for turn in c["history"]) for c in follow_ups)
    assert len({c["text"] for c in cases}) == len(cases), "duplicate request"


@pytest.mark.parametrize("case", [c for c in ISSUE28_CASES if "reference" in c], ids=_id)
def test_issue28_reference_is_valid_and_meets_the_expectation(case: dict[str, Any]) -> None:
    test_reference_spec_is_valid_and_meets_the_expectation(case)
    data = BENCH.case_summary(case)
    for turn in case.get("history") or []:
        model = (
            BENCH.parse_plot_spec(turn["spec"])
            if "kind" in turn["spec"]
            else (BENCH.parse_analysis_spec(turn["spec"]))
        )
        BENCH.check_columns(model, [c["name"] for c in data["columns"]])
