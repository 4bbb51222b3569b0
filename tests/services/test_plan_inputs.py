"""services.plan_inputs: plans by path or id, typed vars, answers files, 再実行 points."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from keiri_agent.config import Settings
from keiri_agent.errors import UserInputError
from keiri_agent.plans.engine import PlanEngine
from keiri_agent.services.plan_inputs import (
    failed_node,
    load_plan,
    locate_plan,
    node_owner,
    parse_file_assignments,
    parse_var_assignments,
    parse_var_value,
    plan_file_inputs,
    read_answers,
    read_plan_files,
    read_plan_text,
    rerun_start,
    var_kind,
    var_text,
)

PLAN = """\
apiVersion: v1
id: {id}
version: {version}
graph:
  - {{id: t, block: text.template, in: {{template: "x", values: {{}}}}}}
"""


@pytest.fixture
def engine(keiri_home: Path) -> PlanEngine:
    (keiri_home / "designs").mkdir()
    return PlanEngine(Settings())


def _write(path: Path, plan_id: str, version: str = "1.0.0") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(PLAN.format(id=plan_id, version=version), encoding="utf-8")
    return path


def test_a_plan_by_path_by_id_and_by_its_newest_registered_version(
    engine: PlanEngine, tmp_path: Path
) -> None:
    designs = engine.store.designs_dir
    loose = _write(tmp_path / "loose.yaml", "loose")
    assert locate_plan(engine.store, loose) == loose
    assert locate_plan(engine.store, str(loose)) == loose
    exact = _write(designs / "team" / "exact.yaml", "team/exact")
    assert locate_plan(engine.store, "team/exact") == exact
    _write(designs / "monthly_202501011200.yaml", "monthly", "1.0.0")
    newest = _write(designs / "monthly_202502011200.yaml", "monthly", "1.1.0")
    assert locate_plan(engine.store, "monthly") == newest
    assert load_plan(engine, "monthly").version == "1.1.0"
    path, text = read_plan_text(engine.store, "monthly")
    assert path == newest and "1.1.0" in text


def test_unknown_plans_and_ids_leaving_designs(engine: PlanEngine, tmp_path: Path) -> None:
    _write(engine.store.designs_dir / "known.yaml", "known")
    with pytest.raises(UserInputError) as unknown:
        locate_plan(engine.store, "knwon")
    assert unknown.value.code == "PLAN_NOT_FOUND"
    assert "known" in unknown.value.message  # the close match is offered
    with pytest.raises(UserInputError) as missing:
        locate_plan(engine.store, tmp_path / "nope.yaml")
    assert missing.value.code == "PLAN_NOT_FOUND"
    with pytest.raises(UserInputError) as outside:
        locate_plan(engine.store, "../secret")
    assert outside.value.code == "PLAN_PATH"


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("50000", 50000),
        ("1.5", 1.5),
        ("はい", "はい"),
        ("[a, b]", ["a", "b"]),
        ('{"地域": "関東"}', {"地域": "関東"}),
        ("true", True),
        ("", ""),
        ("  ", ""),
        ('"9:00 開始"', "9:00 開始"),
    ],
)
def test_var_values_are_typed_from_yaml(text: str, value: Any) -> None:
    assert parse_var_value("v", text) == value


@pytest.mark.parametrize("text", ["[a, b", "{a: 1", "a: b: c", "- a\nb: c"])
def test_invalid_yaml_is_an_error_naming_the_variable(text: str) -> None:
    with pytest.raises(UserInputError) as caught:
        parse_var_value("tags", text)
    error = caught.value
    assert error.code == "VAR_INVALID"
    assert "変数 tags" in error.message and "YAML" in error.message
    assert error.hint is not None and "引用符" in error.hint
    assert error.details["var"] == "tags"


def test_assignments() -> None:
    assert parse_var_assignments(["a=1", "b = x y", "c=", "d=k=v"]) == {
        "a": 1,
        "b": "x y",
        "c": "",
        "d": "k=v",
    }
    assert parse_var_assignments(None) == {}
    for bad in ("no-equals", "=1"):
        with pytest.raises(UserInputError) as caught:
            parse_var_assignments([bad])
        assert caught.value.code == "VAR_SYNTAX"
    with pytest.raises(UserInputError) as invalid:
        parse_var_assignments(["ok=1", "tags=[a,"])
    assert invalid.value.details["var"] == "tags"


@pytest.mark.parametrize(
    ("default", "kind"),
    [
        (True, "boolean"),
        (2, "integer"),
        (1.5, "number"),
        ("x", "text"),
        (None, "text"),
        ([1], "yaml"),
        ({"a": 1}, "yaml"),
    ],
)
def test_var_kinds_and_text_round_trip(default: Any, kind: str) -> None:
    assert var_kind(default) == kind
    if kind == "yaml":
        assert parse_var_value("v", var_text(default)) == default


def test_answers_files(tmp_path: Path) -> None:
    assert read_answers(None) == {}
    good = tmp_path / "answers.yaml"
    good.write_text("collect: {proceed: true}\n", encoding="cp932")
    assert read_answers(good) == {"collect": {"proceed": True}}
    listed = tmp_path / "list.yaml"
    listed.write_text("- a\n", encoding="utf-8")
    with pytest.raises(UserInputError, match="ノード ID ごとの回答の形になっていません"):
        read_answers(listed)
    broken = tmp_path / "broken.yaml"
    broken.write_text("a: [\n", encoding="utf-8")
    with pytest.raises(UserInputError, match="YAML として読めません"):
        read_answers(broken)
    with pytest.raises(UserInputError, match="が見つかりません"):
        read_answers(tmp_path / "missing.yaml")


def test_node_paths_belong_to_their_top_level_node() -> None:
    assert node_owner("per_client[0]/ask") == "per_client"
    assert node_owner("sub/inner") == "sub"
    assert node_owner("plain") == "plain"
    assert failed_node({"details": {"node_id": "write"}}) == "write"
    assert failed_node({"details": None}) == ""


def test_rerun_start_maps_forms_in_loops_to_their_top_level_node() -> None:
    nodes = ["per_client", "write_excel"]
    forms = ["per_client[0]/ask", "per_client[1]/ask"]
    sent = {"per_client[0]/ask": {"x": 1}, "per_client[1]/ask": {"x": 2}}
    unchanged = dict(sent)
    edited = {**sent, "per_client[1]/ask": {"x": 3}}
    assert rerun_start(nodes, forms, unchanged, sent, "write_excel") == "write_excel"
    assert rerun_start(nodes, forms, edited, sent, "write_excel") == "per_client"
    assert rerun_start(nodes, [], {}, {}, "") == "per_client"
    assert rerun_start(nodes, ["write_excel"], {}, {}, "") == "write_excel"


FILES_PLAN = """\
apiVersion: v1
id: files
version: 1.0.0
vars: {book: null, items: [1], note: null}
graph:
  - id: ask
    block: ui.interactive_input
    in:
      requirements:
        - {id: zip, type: file, label: 証跡, accept: .zip}
        - {id: extra, type: files, label: 追加, required: false}
        - {id: memo, type: text, label: メモ}
  - id: each
    type: loop
    foreach: {input: "${vars.items}", itemVar: item}
    body:
      plan:
        graph:
          - id: read
            block: excel.read_data
            in: {workbook: "${vars.book}"}
          - id: say
            block: text.template
            in: {template: "${vars.note}"}
"""


def test_the_file_inputs_of_a_plan_and_the_files_read_for_them(
    engine: PlanEngine, tmp_path: Path
) -> None:
    plan = load_plan(engine, _raw(tmp_path / "files.yaml", FILES_PLAN))
    inputs = plan_file_inputs(plan, engine.catalog)
    # a var feeding a file port (inside a loop body too), never one feeding text
    assert [(i.name, i.node_id, i.accept, i.multiple) for i in inputs] == [
        ("book", None, None, False),
        ("zip", "ask", ".zip", False),
        ("extra", "ask", None, True),
    ]
    book = _raw(tmp_path / "book.xlsx", "x")
    evidence = _raw(tmp_path / "evidence.zip", "z")
    files = read_plan_files(
        engine,
        plan,
        parse_file_assignments(
            [f"book={book}", f"zip={evidence}", f"extra={book}", f"extra={evidence}"]
        ),
    )
    assert files.vars == {"book": {"name": "book.xlsx", "data": b"x"}}
    assert files.answers["ask"]["zip"] == {"name": "evidence.zip", "data": b"z"}
    assert [item["name"] for item in files.answers["ask"]["extra"]] == [
        "book.xlsx",
        "evidence.zip",
    ]
    merged = files.answers_with({"ask": {"memo": "4 月分"}, "other": {"x": 1}})
    assert merged["ask"]["memo"] == "4 月分" and merged["ask"]["zip"]["data"] == b"z"
    assert merged["other"] == {"x": 1}
    with pytest.raises(UserInputError) as raised:
        read_plan_files(engine, plan, parse_file_assignments([f"note={book}"]))
    assert raised.value.code == "FILE_UNKNOWN_INPUT"
    assert raised.value.details["choices"] == ["book", "zip", "extra"]


@pytest.mark.parametrize("item", ["book", "=a.xlsx", "book="])
def test_file_assignments_need_a_name_and_a_path(item: str) -> None:
    with pytest.raises(UserInputError) as raised:
        parse_file_assignments([item])
    assert raised.value.code == "FILE_SYNTAX"


def _raw(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path
