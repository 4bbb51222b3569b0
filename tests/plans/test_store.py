"""PlanStore: ids to paths under designs/, loading, registering, listing, compatibility."""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path

import pytest

from keiri_agent.errors import PlanValidationError, UserInputError
from keiri_agent.plans.dsl.loader import load_plan_file
from keiri_agent.plans.dsl.models import Plan
from keiri_agent.plans.store import PlanStore, compatibility, dump_plan

DATA = Path(__file__).parent / "data" / "designs"
NOW = datetime(2025, 1, 2, 3, 4, 59)


def make_plan(plan_id: str = "invoice", version: str = "1.0.0", **extra: object) -> Plan:
    return Plan.model_validate(
        {
            "apiVersion": "v1",
            "id": plan_id,
            "version": version,
            "graph": [{"id": "a", "block": "text.template", "in": {"template": "x"}}],
            **extra,
        }
    )


@pytest.fixture()
def store(tmp_path: Path) -> PlanStore:
    return PlanStore(tmp_path / "designs")


def test_plan_ids_map_to_yaml_files_under_designs(store: PlanStore) -> None:
    assert store.path_for("common/validation_flow") == (
        store.designs_dir / "common" / "validation_flow.yaml"
    )
    assert store.path_for("請求書_照合").name == "請求書_照合.yaml"


@pytest.mark.parametrize(
    "plan_id",
    ["", "../secret", "a/../../b", "/etc/passwd", "a//b", "a\\b", "C:evil", "./a", "a/.."],
)
def test_ids_that_leave_designs_are_refused(store: PlanStore, plan_id: str) -> None:
    with pytest.raises(UserInputError) as caught:
        store.path_for(plan_id)
    assert caught.value.code == "PLAN_PATH"


def test_symlinks_that_escape_designs_are_refused(store: PlanStore, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "plan.yaml").write_text(dump_plan(make_plan()), encoding="utf-8")
    store.designs_dir.mkdir()
    os.symlink(outside, store.designs_dir / "linked")
    with pytest.raises(UserInputError) as caught:
        store.load("linked/plan")
    assert caught.value.code == "PLAN_PATH"
    assert store.list() == []


def test_register_writes_a_timestamped_file_that_loads_back(store: PlanStore) -> None:
    plan = make_plan(vars={"x": None, "rows": [{"a": 1}]}, exports=[{"from": "a.text", "as": "t"}])
    path = store.register(plan, now=NOW)
    assert path == store.designs_dir / "invoice_202501020304.yaml"
    assert load_plan_file(path) == plan
    assert store.load("invoice") == plan


def test_register_never_overwrites(store: PlanStore) -> None:
    first = store.register(make_plan(version="1.0.0"), now=NOW)
    second = store.register(make_plan(version="1.0.1"), now=NOW)
    third = store.register(make_plan(version="1.0.2"), now=NOW)
    assert [p.name for p in (first, second, third)] == [
        "invoice_202501020304.yaml",
        "invoice_202501020304_2.yaml",
        "invoice_202501020304_3.yaml",
    ]
    assert load_plan_file(first).version == "1.0.0"
    assert store.load("invoice").version == "1.0.2"  # the newest registration


def test_load_prefers_the_exact_file_then_the_newest_version(store: PlanStore) -> None:
    store.register(make_plan(version="1.0.0"), now=datetime(2025, 1, 1, 9, 0))
    store.register(make_plan(version="2.0.0"), now=datetime(2025, 3, 1, 9, 0))
    store.register(make_plan(version="1.5.0"), now=datetime(2025, 2, 1, 9, 0))
    assert store.load("invoice").version == "2.0.0"
    assert store.load("invoice_202501010900").version == "1.0.0"
    (store.designs_dir / "invoice.yaml").write_text(
        dump_plan(make_plan(version="0.1.0")), encoding="utf-8"
    )
    assert store.load("invoice").version == "0.1.0"
    assert [e.registered_at for e in store.versions("invoice")] == [
        datetime(2025, 1, 1, 9, 0),
        datetime(2025, 2, 1, 9, 0),
        datetime(2025, 3, 1, 9, 0),
    ]


def test_not_found_lists_the_plans_with_a_close_match() -> None:
    store = PlanStore(DATA)
    with pytest.raises(UserInputError) as caught:
        store.load("common/validation_flw")
    assert caught.value.code == "PLAN_NOT_FOUND"
    assert "'common/validation_flow' のことですか" in caught.value.message
    assert "invoice_reconciliation" in caught.value.message


def test_not_found_in_an_empty_store(store: PlanStore) -> None:
    with pytest.raises(UserInputError, match="Plan がありません"):
        store.load("anything")


def test_an_invalid_file_raises_plan_validation_error(store: PlanStore) -> None:
    store.designs_dir.mkdir()
    (store.designs_dir / "bad.yaml").write_text("apiVersion: v1\nid: [\n", encoding="utf-8")
    with pytest.raises(PlanValidationError) as caught:
        store.load("bad")
    assert caught.value.issues[0].code == "YAML_SYNTAX"


def test_list_skips_templates_and_sorts(store: PlanStore) -> None:
    store.register(make_plan("b"), now=NOW)
    store.register(make_plan("common/a"), now=NOW)
    (store.designs_dir / "plain.yaml").write_text(dump_plan(make_plan("plain")), encoding="utf-8")
    (store.designs_dir / "templates").mkdir()
    (store.designs_dir / "templates" / "t.yaml").write_text("id: t\n", encoding="utf-8")
    entries = store.list()
    assert [(e.plan_id, e.file_id) for e in entries] == [
        ("b", "b_202501020304"),
        ("common/a", "common/a_202501020304"),
        ("plain", "plain"),
    ]
    assert entries[0].registered_at == datetime(2025, 1, 2, 3, 4)
    assert entries[2].registered_at is None


def test_list_of_a_missing_folder_is_empty(store: PlanStore) -> None:
    assert store.list() == []
    assert not store.exists("x")


def test_compatibility_warnings() -> None:
    old = make_plan(version="1.2.0", vars={"a": 1, "b": 2}, exports=[{"from": "a.text", "as": "t"}])
    assert (
        compatibility(
            old,
            make_plan(
                version="1.3.0", vars={"a": 1, "b": 2}, exports=[{"from": "a.text", "as": "t"}]
            ),
        )
        == []
    )
    warnings = compatibility(old, make_plan(version="2.0.0", vars={"a": 1}))
    assert any("メジャーバージョンが上がりました" in w for w in warnings)
    assert any("vars が消えました" in w and "'b'" in w for w in warnings)
    assert any("exports が消えました" in w and "'t'" in w for w in warnings)
    assert any(
        "バージョンが戻っています" in w
        for w in PlanStore.compatibility(old, make_plan(version="1.1.0"))
    )
    changed_api = make_plan(version="1.2.1").model_copy(update={"api_version": "v2"})
    assert any(
        "apiVersion が v1 から v2 に変わりました" in w for w in compatibility(old, changed_api)
    )
    same_version = make_plan(
        version="1.2.0", vars={"a": 1, "b": 3}, exports=[{"from": "a.text", "as": "t"}]
    )
    assert compatibility(old, same_version) == ["Plan が変わったのにバージョンが 1.2.0 のままです"]
