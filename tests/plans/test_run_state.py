"""The run state's value encoding: tagged JSON that round-trips, and clear refusals."""

from __future__ import annotations

import datetime as dt
import json
import math
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from keiri_agent.errors import UserInputError
from keiri_agent.plans.run.run_state import (
    GraphState,
    LoopState,
    NodeState,
    RunState,
    StateEncodingError,
    SubflowState,
    _dumps,
    decode,
    encode,
    find_state,
    load_state,
    save_state,
    unsupported_value,
)

leaves = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | st.text()
    | st.binary()
    | st.datetimes(timezones=st.none() | st.just(dt.UTC))
    | st.dates()
    | st.times()
    | st.decimals(allow_nan=False, allow_infinity=False)
)
values = st.recursive(
    leaves,
    lambda children: (
        st.lists(children)
        | st.tuples(children, children)
        | st.dictionaries(
            st.text() | st.sampled_from(["__bytes__", "__dict__", "__tuple__", "__float__"]),
            children,
        )
    ),
    max_leaves=20,
)


@given(values)
def test_every_supported_value_survives_a_json_round_trip(value: Any) -> None:
    text = json.dumps(encode(value), allow_nan=False)

    assert decode(json.loads(text)) == value


@given(values)
def test_the_saved_text_is_json_dumps_of_the_encoded_value(value: Any) -> None:
    encoded = encode(value)

    assert _dumps(encoded) == json.dumps(encoded, ensure_ascii=False, allow_nan=False)


def test_floats_and_nested_mappings_encode_in_one_pass() -> None:
    value = {"ms": 1.5, "bad": math.inf, "inner": {"x": 2.0, "deep": {"__tuple__": [1]}}}

    encoded = encode(value)

    assert encoded == {
        "ms": 1.5,
        "bad": {"__float__": "inf"},
        "inner": {"x": 2.0, "deep": {"__dict__": {"__tuple__": [1]}}},
    }
    assert decode(json.loads(_dumps(encoded))) == value


def test_special_floats_and_tag_like_mappings_round_trip() -> None:
    value = {"nan": math.nan, "inf": -math.inf, "tagged": {"__bytes__": "not bytes"}}

    back = decode(json.loads(json.dumps(encode(value), allow_nan=False)))

    assert math.isnan(back["nan"]) and back["inf"] == -math.inf
    assert back["tagged"] == {"__bytes__": "not bytes"}


@pytest.mark.parametrize(
    ("value", "path", "type_name"),
    [
        ({"rows": [1, {"cell": object()}]}, "rows[1].cell", "object"),
        ({"ids": {1, 2}}, "ids", "set"),
        ({"m": {3: "x"}}, "m[3]", "key of type int"),
    ],
)
def test_unsupported_values_are_named_by_path_and_type(
    value: Any, path: str, type_name: str
) -> None:
    assert unsupported_value(value) == (path, type_name)
    with pytest.raises(StateEncodingError, match=r"実行の記録に保存できません") as raised:
        encode(value)
    assert raised.value.details == {"path": path, "type": type_name}


def test_a_run_state_saves_atomically_and_loads_back(tmp_path: Path) -> None:
    graph = GraphState(
        {
            "a": NodeState(status="success", outputs={"raw": b"\x01"}, attempts=1),
            "loop": NodeState(
                status="paused",
                loop=LoopState(
                    kind="foreach",
                    iterations={0: GraphState({"x": NodeState(status="waiting")})},
                    statuses={0: "paused"},
                ),
            ),
            "sub": NodeState(
                status="paused",
                subflow=SubflowState(run_id="run_x.sub#1", plan={"id": "p"}, inputs={"d": 1}),
            ),
        }
    )
    state = RunState(
        run_id="run_x",
        plan_id="common/flow",
        plan={"id": "common/flow"},
        log_path="common/flow/x.jsonl",
        status="paused",
        graph=graph,
        answers={"ask": {"when": dt.date(2025, 1, 1)}},
    )

    path = save_state(tmp_path, state)
    loaded = load_state(tmp_path, "run_x")

    assert path == tmp_path / "common" / "flow" / "run_x.state.json"
    assert find_state(tmp_path, "run_x") == path
    assert [p.name for p in path.parent.iterdir()] == ["run_x.state.json"]
    assert loaded.graph == graph
    assert loaded.answers == state.answers
    assert json.loads(path.read_text())["graph"]["nodes"]["a"] == {
        "status": "success",
        "outputs": {"raw": {"__bytes__": "AQ=="}},
        "attempts": 1,
    }


def test_run_ids_are_checked_before_searching(tmp_path: Path) -> None:
    with pytest.raises(UserInputError, match=r"実行 ID .* の形式が正しくありません"):
        find_state(tmp_path, "../../etc/passwd")


def test_decimal_and_datetime_keep_their_types() -> None:
    value = {"amount": Decimal("1234.50"), "at": dt.datetime(2025, 1, 1, 9, 30, tzinfo=dt.UTC)}

    back = decode(json.loads(json.dumps(encode(value))))

    assert back == value
    assert isinstance(back["amount"], Decimal) and back["at"].tzinfo is not None


def test_a_replaced_plan_is_saved_as_the_new_plan(tmp_path: Path) -> None:
    # save_state encodes the plan once per plan dict: a new dict is encoded again
    state = RunState(run_id="run_p", plan_id="p", plan={"id": "p", "v": 1}, log_path="p/x.jsonl")
    save_state(tmp_path, state)
    assert load_state(tmp_path, "run_p").plan == {"id": "p", "v": 1}

    state.plan = {"id": "p", "v": 2, "when": dt.date(2025, 1, 2)}
    state.status = "paused"
    save_state(tmp_path, state)

    loaded = load_state(tmp_path, "run_p")
    assert loaded.plan == {"id": "p", "v": 2, "when": dt.date(2025, 1, 2)}
    assert loaded.status == "paused"


def test_a_plan_is_dumped_once_and_later_secrets_are_still_masked(tmp_path: Path) -> None:
    from runner_support import make_plan, node

    from keiri_agent.masking import register_secret
    from keiri_agent.plans.run.run_state import plan_to_dict, save_state

    secret = "plan-text-cache-secret-0123"
    plan = make_plan(node("a", v=secret), plan_id="cached")
    first = plan_to_dict(plan)
    assert plan_to_dict(plan) is first  # the same Plan object: dumped once
    assert first == plan.model_dump(by_alias=True)
    saved = []
    for run_id in ("run_cache_1", "run_cache_2"):
        state = RunState(run_id=run_id, plan_id="cached", plan=plan_to_dict(plan), log_path="x")
        saved.append(json.loads(save_state(tmp_path, state).read_text(encoding="utf-8")))
        register_secret(secret)  # registered after the first run's state was written
    assert saved[0]["plan"] == first
    assert secret not in json.dumps(saved[1])
    assert saved[1]["plan"]["graph"][0]["in"]["v"] == "***"


def test_a_graph_encodes_in_one_pass_as_its_dict_does(tmp_path: Path) -> None:
    from keiri_agent.plans.run.run_state import (
        GraphState,
        LoopState,
        NodeState,
        StateEncodingError,
        encode_graph,
        save_state,
    )

    loop = LoopState(kind="foreach", statuses={0: "success"}, count=1)
    loop.iterations[0] = GraphState({"w": NodeState(status="success", outputs={"v": (1, 2)})})
    graph = GraphState(
        {
            "a": NodeState(),
            "b": NodeState(
                status="success",
                outputs={"x": 1.5, "y": math.inf, "z": {"__bytes__": "t"}, "d": Decimal("1")},
                attempts=2,
                block="rt.work",
                duration_ms=math.nan,
            ),
            "c": NodeState(status="failed", error={"code": "E", "n": [math.inf]}, duration_ms=3),
            "d": NodeState(status="waiting", request={"q": dt.date(2026, 1, 2)}),
            "e": NodeState(status="running", loop=loop),
        }
    )
    assert encode_graph(graph) == encode(graph.to_dict())
    alone = GraphState({"__tuple__": NodeState()})
    assert encode_graph(alone) == encode(alone.to_dict())

    graph.nodes["b"].outputs = {"bad": object()}
    state = RunState(run_id="run_g", plan_id="g", plan={"id": "g"}, log_path="g/x.jsonl")
    state.graph = graph
    with pytest.raises(StateEncodingError, match=r"graph\.nodes\.b\.outputs\.bad"):
        save_state(tmp_path, state)


def test_a_plain_plan_is_written_without_an_encoded_copy_and_others_keep_their_tags(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from keiri_agent.plans.run import run_state

    encoded: list[object] = []
    original = run_state.encode

    def counted(value: Any) -> Any:
        encoded.append(value)
        return original(value)

    monkeypatch.setattr(run_state, "encode", counted)
    plain = {"id": "p", "graph": [{"id": "a", "in": {"v": [1, 2.5, None, True, "日本"]}}]}
    assert json.loads(run_state._plan_json(plain)) == plain
    assert encoded == []  # nothing to tag: the dict is written as it is

    tagged: list[dict[str, Any]] = [
        {"in": {"v": (1, 2)}},
        {"in": {"v": dt.date(2025, 1, 2)}},
        {"in": {"v": float("nan")}},
        {"in": {"__bytes__": "x"}},
        {"in": {"v": [{"__tuple__": []}]}},
    ]
    for case in tagged:
        text = run_state._plan_json(case)
        assert text == run_state._dumps(original(case))
        assert json.loads(text) != case  # tagged or escaped, as before
    assert len(encoded) == len(tagged)
    with pytest.raises(StateEncodingError, match=r"in\[1\]"):  # a key that is not text
        run_state._plan_json({"in": {1: "int key"}})
