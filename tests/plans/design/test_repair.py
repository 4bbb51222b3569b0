"""The per-node diff between attempts and the repair material."""

from __future__ import annotations

from keiri_agent.plans.catalog.catalog import BlockCatalog
from keiri_agent.plans.design.models import NodeChange
from keiri_agent.plans.design.repair import (
    PLAN_LEVEL,
    blocks_at_fault,
    diff_nodes,
    error_codes,
    errors_by_node,
    spec_excerpt,
)

READ = {"id": "read", "block": "excel.read", "in": {"workbook": "${vars.book}"}}
FILTER = {"id": "big", "block": "table.filter", "in": {"rows": "${read.records}"}}


def test_diff_nodes_reports_added_removed_and_changed_keys() -> None:
    fixed_read = {**READ, "block": "excel.read_data"}
    sort = {"id": "sort", "block": "table.sort", "in": {"records": "${big.records}"}}
    changes = diff_nodes([READ, FILTER], [fixed_read, sort])
    assert changes == [
        NodeChange("read", "changed", before=READ, after=fixed_read, fields=("block",)),
        NodeChange("sort", "added", after=sort),
        NodeChange("big", "removed", before=FILTER),
    ]


def test_diff_nodes_leaves_unchanged_nodes_out() -> None:
    assert diff_nodes([READ, FILTER], [dict(READ), dict(FILTER)]) == []
    fixed = {**FILTER, "in": {"records": "${read.records}"}, "out": {"records": "rows"}}
    [change] = diff_nodes([READ, FILTER], [READ, fixed])
    assert change.fields == ("in", "out")


def test_errors_are_counted_grouped_and_their_blocks_found() -> None:
    errors = [
        {"code": "UNKNOWN_BLOCK", "node_id": "read"},
        {"code": "UNKNOWN_INPUT", "node_id": "big"},
        {"code": "UNKNOWN_INPUT", "node_id": "big"},
        {"code": "CYCLE", "node_id": None},
    ]
    assert error_codes(errors) == {"CYCLE": 1, "UNKNOWN_BLOCK": 1, "UNKNOWN_INPUT": 2}
    groups = errors_by_node(errors)
    assert list(groups) == ["read", "big", PLAN_LEVEL] and len(groups["big"]) == 2
    loop = {"id": "each", "type": "loop", "body": {"plan": {"graph": [FILTER]}}}
    assert blocks_at_fault(errors, [READ, loop]) == ["excel.read", "table.filter"]


def test_spec_excerpt_marks_required_inputs_with_types() -> None:
    text = spec_excerpt(BlockCatalog.discover().resolve("table.filter"))
    assert "ブロック table.filter:" in text
    assert "- records: array（必須）" in text
    assert "- conditions: array " in text and "conditions: array（必須）" not in text
    assert "outputs:\n    - records: array" in text
