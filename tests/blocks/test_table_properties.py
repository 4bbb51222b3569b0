"""table.sort and table.aggregate agree with pandas on generated tables (Hypothesis)."""

from __future__ import annotations

import logging
import math
from typing import Any

import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from keiri_agent.blocks.base import BlockContext
from keiri_agent.config import Settings
from keiri_agent.plans.catalog.catalog import BlockCatalog, schema_problems

CATALOG = BlockCatalog.discover()


def _ctx() -> BlockContext:
    return BlockContext(
        run_id="run",
        plan_id="plan",
        node_id="node",
        settings=Settings(),
        logger=logging.getLogger(),
    )


def run(block_id: str, **inputs: Any) -> list[dict[str, Any]]:
    spec = CATALOG.resolve(block_id)
    outputs = CATALOG.load(spec).run({**spec.input_defaults(), **inputs}, _ctx())
    assert schema_problems(outputs["records"], spec.output_schema("records")) == []
    return outputs["records"]


def ids(records: list[dict[str, Any]]) -> list[int]:
    return [row["id"] for row in records]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.fixed_dictionaries(
            {"a": st.one_of(st.none(), st.integers(-3, 3)), "b": st.integers(-2, 2)}
        ),
        max_size=12,
    ),
    st.booleans(),
    st.booleans(),
)
def test_sort_property_matches_pandas(rows: list[dict[str, Any]], up_a: bool, up_b: bool) -> None:
    records = [{"id": i, **row} for i, row in enumerate(rows)]
    result = run("table.sort", records=records, by=["a", "b"], ascending=[up_a, up_b])
    if records:
        frame = pd.DataFrame(records)
        expected = frame.sort_values(
            ["a", "b"], ascending=[up_a, up_b], na_position="last", kind="stable"
        )["id"].tolist()
        assert ids(result) == expected
    else:
        assert result == []


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.fixed_dictionaries(
            {
                "g": st.sampled_from(["x", "y", "z"]),
                "v": st.one_of(st.none(), st.integers(-100, 100), st.floats(-1e3, 1e3)),
            }
        ),
        min_size=1,
        max_size=15,
    )
)
def test_aggregate_property_matches_pandas(rows: list[dict[str, Any]]) -> None:
    aggs = ["sum", "mean", "count", "min", "max"]
    result = run("table.aggregate", records=rows, group_by=["g"], metrics={"v": aggs})
    frame = pd.DataFrame(rows).astype({"v": "float64"})
    grouped = frame.groupby("g", sort=False)
    assert [row["g"] for row in result] == list(grouped.groups)
    for row in result:
        values = grouped.get_group(row["g"])["v"]
        for agg in aggs:
            expected = getattr(values, agg)()
            actual = row[f"v_{agg}"]
            if pd.isna(expected):
                assert actual is None
            else:
                assert math.isclose(actual, expected, rel_tol=1e-9, abs_tol=1e-9)
