"""services.jsonforms: one JSON form per result, bytes always ``{"bytes", "base64"}``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from keiri_agent.agents.analysis import AnalysisAgent
from keiri_agent.agents.helpdesk.desk import EXAMPLE_QUESTION, HelpDesk
from keiri_agent.config import Settings
from keiri_agent.demo import sample_data_path, sample_evidence_zip, sample_plan_path
from keiri_agent.errors import UserInputError
from keiri_agent.plans.engine import PlanEngine
from keiri_agent.services.exports import OutputWriter
from keiri_agent.services.jsonforms import (
    bytes_json,
    decode_bytes,
    dry_run_json,
    dumps,
    error_json,
    helpdesk_answer_json,
    json_value,
    run_result_json,
    spec_results_json,
    turn_json,
    validation_json,
)
from keiri_agent.services.plan_inputs import load_plan

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "designs" / "examples" / "sales_by_region.yaml"


def _round_trip(data: object) -> object:
    return json.loads(dumps(data))


@pytest.mark.parametrize("data", [b"", b"\x00\xff" * 100, bytes(range(256))])
def test_bytes_round_trip(data: bytes) -> None:
    form = _round_trip({"x": data})
    assert isinstance(form, dict)
    assert set(form["x"]) == {"bytes", "base64"}
    assert decode_bytes(form["x"]) == data


def test_file_values_keep_their_keys_and_previews_carry_only_the_size(tmp_path: Path) -> None:
    value = {"upload": {"name": "a.csv", "data": b"x,y\n", "note": "ok"}, "n": 1}
    assert json_value(value)["upload"] == {
        "name": "a.csv",
        "note": "ok",
        **bytes_json(b"x,y\n"),
    }
    assert json_value(value, preview=True)["upload"] == {"name": "a.csv", "note": "ok", "bytes": 4}
    written = json_value(value, writer=OutputWriter(tmp_path))["upload"]
    assert Path(written["path"]).read_bytes() == b"x,y\n"
    assert "base64" not in written


def test_a_mismatched_size_is_refused() -> None:
    form = bytes_json(b"abc")
    with pytest.raises(ValueError, match="3 bytes"):
        decode_bytes({**form, "bytes": 4})


def test_a_plan_run_with_a_workbook_and_an_upload() -> None:
    engine = PlanEngine(Settings())
    plan = load_plan(engine, sample_plan_path("evidence_summary"))
    paused = engine.run(plan)
    upload = {"evidence_zip": {"name": "evidence.zip", "data": sample_evidence_zip()}}
    result = engine.resume(paused.run_id, answers={"collect_zip": upload})
    assert result.status == "success"

    form = _round_trip(run_result_json(result))
    assert isinstance(form, dict)
    assert form["status"] == "success" and form["run_id"] == result.run_id
    workbook = form["outputs"]["write_report"]["workbook"]
    assert decode_bytes(workbook) == result.outputs["write_report"]["workbook"]
    assert form["log_path"] == str(result.log_path)


def test_validation_dry_run_and_error_forms() -> None:
    engine = PlanEngine(Settings())
    plan = load_plan(engine, EXAMPLE)
    assert _round_trip(validation_json(engine.validate(plan))) == engine.validate(plan).to_dict()
    dry = _round_trip(dry_run_json(engine.dry_run(plan)))
    assert isinstance(dry, dict) and dry["ok"] is True
    error = _round_trip(error_json(UserInputError("だめです", hint="こうします")))
    assert error == {
        "ok": False,
        "error": {"code": "INPUT_ERROR", "message": "だめです", "hint": "こうします"}
        | {"details": {}},
    }


def test_an_analysis_turn_and_spec_results_with_a_figure() -> None:
    with AnalysisAgent(Settings()) as agent:
        dataset_id = agent.load_file(sample_data_path())
        turn = agent.ask("売上の分布をヒストグラムで見せて", dataset_id=dataset_id)
        results = agent.run_specs([{"type": "plot", "kind": "hist", "x": "売上"}], dataset_id)
    form = _round_trip(turn_json(turn))
    assert isinstance(form, dict)
    assert form["thread_id"] == turn.thread_id
    (figure,) = [a for a in form["artifacts"] if a["kind"] == "figure"]
    (payload,) = [a["payload"] for a in turn.artifacts if a["kind"] == "figure"]
    assert figure["media_type"] == "image/png"
    assert decode_bytes(figure) == payload

    written = {figure["artifact_id"]: Path("out/figures/x.png")}
    as_file = turn_json(turn, written)["artifacts"]
    assert {"path": "out/figures/x.png", "bytes": len(payload)}.items() <= next(
        a for a in as_file if a["kind"] == "figure"
    ).items()

    specs = _round_trip(spec_results_json(dataset_id, results))
    assert isinstance(specs, dict)
    (spec_figure,) = [a for a in specs["results"][0]["artifacts"] if a["kind"] == "figure"]
    (spec_payload,) = [a["payload"] for a in results[0].artifacts if a["kind"] == "figure"]
    assert decode_bytes(spec_figure) == spec_payload


def test_a_helpdesk_answer() -> None:
    desk = HelpDesk(Settings())
    desk.index_sample()
    result = desk.ask(EXAMPLE_QUESTION)
    form = _round_trip(helpdesk_answer_json(result))
    assert isinstance(form, dict)
    assert form["answer"] == result.answer
    assert form["question"] == EXAMPLE_QUESTION
    assert form["offline"] is True
