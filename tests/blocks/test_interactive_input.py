"""ui.interactive_input (request, answers → outputs, InputRequired), the legacy UI blocks,
and a Plan run that pauses, asks again for missing answers and finishes."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from keiri_agent.blocks.base import BlockContext, InputRequired, UIBlock
from keiri_agent.config import Settings
from keiri_agent.errors import BlockError
from keiri_agent.plans.catalog.catalog import BlockCatalog, schema_problems
from keiri_agent.plans.check.validator import PlanValidator
from keiri_agent.plans.dsl.models import Plan
from keiri_agent.plans.run.runner import PlanRunner

ZIP = {"name": "evidence.zip", "data": b"PK\x03\x04"}
REQUIREMENTS: list[dict[str, Any]] = [
    {"id": "evidence_zip", "type": "file", "label": "証跡ZIP", "accept": ".zip"},
    {"id": "region", "type": "select", "label": "地域", "options": ["関東", "関西"]},
    {"id": "amount", "type": "number", "label": "金額", "validation": {"min": 0}},
    {"id": "memo", "type": "text", "label": "メモ", "required": False},
    {"id": "rate", "type": "number", "label": "率", "required": False, "default": 0.1},
    {"id": "proceed", "type": "boolean", "label": "実行してよい"},
]


@pytest.fixture(scope="module")
def catalog() -> BlockCatalog:
    return BlockCatalog.discover()


def context(answers: Mapping[str, Any] | None = None) -> BlockContext:
    return BlockContext(
        run_id="run",
        plan_id="plan",
        node_id="collect",
        settings=Settings(),
        logger=logging.getLogger(),
        answers=answers,
    )


def block_and_inputs(
    catalog: BlockCatalog, block_id: str, **inputs: Any
) -> tuple[UIBlock, dict[str, Any]]:
    spec = catalog.resolve(block_id)
    values = {**spec.input_defaults(), **inputs}
    for name, value in values.items():
        assert schema_problems(value, spec.input_schema(name)) == [], name
    block = catalog.load(spec)
    assert isinstance(block, UIBlock)
    return block, values


def run(catalog: BlockCatalog, block_id: str, answers: Any, **inputs: Any) -> dict[str, Any]:
    block, values = block_and_inputs(catalog, block_id, **inputs)
    block.validate(values, context(answers))
    outputs = block.run(values, context(answers))
    spec = catalog.resolve(block_id)
    assert set(outputs) == set(spec.outputs)
    for name in spec.outputs:
        assert schema_problems(outputs[name], spec.output_schema(name)) == [], name
    return outputs


def asked(catalog: BlockCatalog, block_id: str, answers: Any, **inputs: Any) -> dict[str, Any]:
    with pytest.raises(InputRequired) as caught:
        run(catalog, block_id, answers, **inputs)
    return caught.value.request


def test_spec_is_the_real_ui_block(catalog: BlockCatalog) -> None:
    spec = catalog.resolve("ui.interactive_input")
    assert spec.kind == "ui" and spec.version == "1.0.0"
    assert set(spec.inputs) == {"mode", "requirements", "message", "context", "approval"}
    assert set(spec.outputs) == {"collected_data", "approved", "response", "metadata"}
    assert spec.sample_problems() == []


def test_request_lists_fields_with_defaults_filled(catalog: BlockCatalog) -> None:
    block, values = block_and_inputs(
        catalog, "ui.interactive_input", mode="mixed", message="入力して", requirements=REQUIREMENTS
    )
    request = block.request(values, context())
    assert request["mode"] == "mixed" and request["message"] == "入力して"
    fields = {field["id"]: field for field in request["fields"]}
    assert list(fields) == [item["id"] for item in REQUIREMENTS]
    assert fields["evidence_zip"] == {
        "id": "evidence_zip",
        "type": "file",
        "label": "証跡ZIP",
        "accept": ".zip",
        "required": True,
    }
    assert fields["memo"]["required"] is False and fields["rate"]["default"] == 0.1
    assert fields["region"]["options"] == ["関東", "関西"]
    assert "context" not in request
    block, values = block_and_inputs(catalog, "ui.interactive_input", context={"month": "2025-01"})
    assert block.request(values, context())["context"] == {"month": "2025-01"}


def test_collect_builds_collected_data_and_metadata(catalog: BlockCatalog) -> None:
    answers = {"evidence_zip": ZIP, "region": "関西", "amount": 1200, "proceed": False}
    outputs = run(catalog, "ui.interactive_input", answers, requirements=REQUIREMENTS)
    assert outputs["collected_data"] == {
        "evidence_zip": ZIP,
        "region": "関西",
        "amount": 1200,
        "memo": None,
        "rate": 0.1,
        "proceed": False,
    }
    assert outputs["approved"] is None and outputs["response"] is None
    metadata = outputs["metadata"]
    assert metadata["mode"] == "collect"
    assert metadata["answered_fields"] == ["evidence_zip", "region", "amount", "proceed"]
    assert datetime.fromisoformat(metadata["answered_at"]).tzinfo is not None


def test_missing_required_answers_ask_again(catalog: BlockCatalog) -> None:
    request = asked(catalog, "ui.interactive_input", {"region": "関東"}, requirements=REQUIREMENTS)
    assert request["missing"] == ["evidence_zip", "amount", "proceed"]
    assert request["errors"] == {}
    assert [field["id"] for field in request["fields"]] == [r["id"] for r in REQUIREMENTS]


def test_invalid_answers_ask_again_with_errors_per_field(catalog: BlockCatalog) -> None:
    answers = {
        "evidence_zip": {"name": "evidence.pdf", "data": b"%PDF"},
        "region": "九州",
        "amount": -5,
        "proceed": "yes",
        "surprise": 1,
    }
    request = asked(catalog, "ui.interactive_input", answers, requirements=REQUIREMENTS)
    assert request["missing"] == []
    assert set(request["errors"]) == {"evidence_zip", "region", "amount", "proceed", "surprise"}
    assert "受け付けない種類" in request["errors"]["evidence_zip"]


def test_blank_text_counts_as_missing(catalog: BlockCatalog) -> None:
    reqs = [{"id": "name", "type": "text", "label": "氏名", "validation": {"max_length": 5}}]
    assert asked(catalog, "ui.interactive_input", {"name": "  "}, requirements=reqs)["missing"] == [
        "name"
    ]
    outputs = run(catalog, "ui.interactive_input", {"name": "山田"}, requirements=reqs)
    assert outputs["collected_data"] == {"name": "山田"}


def test_confirm_mode_outputs_approved(catalog: BlockCatalog) -> None:
    block, values = block_and_inputs(catalog, "ui.interactive_input", mode="confirm", message="OK?")
    fields = block.request(values, context())["fields"]
    assert fields == [{"id": "approved", "type": "boolean", "label": "承認", "required": True}]
    outputs = run(catalog, "ui.interactive_input", {"approved": False}, mode="confirm")
    assert outputs["approved"] is False and outputs["collected_data"] == {}
    assert asked(catalog, "ui.interactive_input", {}, mode="confirm")["missing"] == ["approved"]
    errors = asked(catalog, "ui.interactive_input", {"approved": "はい"}, mode="confirm")["errors"]
    assert set(errors) == {"approved"}


def test_inquire_mode_outputs_response(catalog: BlockCatalog) -> None:
    outputs = run(
        catalog, "ui.interactive_input", {"response": "続けて"}, mode="inquire", message="どうする?"
    )
    assert outputs["response"] == "続けて" and outputs["approved"] is None
    assert asked(catalog, "ui.interactive_input", {}, mode="inquire")["missing"] == ["response"]


@pytest.mark.parametrize(
    ("inputs", "message"),
    [
        ({"requirements": [REQUIREMENTS[0], REQUIREMENTS[0]]}, "2 回宣言"),
        (
            {"requirements": [{"id": "x", "type": "select", "label": "x"}]},
            "options（選択肢）がありません",
        ),
        (
            {"requirements": [{"id": "x", "type": "video", "label": "x"}]},
            "項目の型 'video' は使えません",
        ),
        (
            {"mode": "confirm", "requirements": [{"id": "approved", "type": "text", "label": "x"}]},
            "予約されています",
        ),
    ],
)
def test_bad_requirements_fail_validation(
    catalog: BlockCatalog, inputs: dict[str, Any], message: str
) -> None:
    block = catalog.load(catalog.resolve("ui.interactive_input"))
    spec = catalog.resolve("ui.interactive_input")
    with pytest.raises(BlockError, match=message) as caught:
        block.validate({**spec.input_defaults(), **inputs}, context())
    assert caught.value.code == "INPUT_VALIDATION_FAILED"


def test_legacy_file_uploader(catalog: BlockCatalog) -> None:
    one = run(catalog, "ui.file_uploader", {"file": ZIP}, accept=".zip")
    assert one == {"files": [ZIP], "file": ZIP}
    many = run(catalog, "ui.file_uploader", {"files": [ZIP, b"raw"]}, multiple=True)
    assert many == {"files": [ZIP, b"raw"], "file": ZIP}
    assert asked(catalog, "ui.file_uploader", {}, multiple=True)["missing"] == ["files"]
    bad = asked(
        catalog, "ui.file_uploader", {"file": {"name": "a.txt", "data": b""}}, accept=".zip"
    )
    assert set(bad["errors"]) == {"file"}


def test_legacy_confirmation(catalog: BlockCatalog) -> None:
    assert run(catalog, "ui.confirmation", {"approved": True}, message="OK?") == {"approved": True}
    request = asked(catalog, "ui.confirmation", {}, message="OK?")
    assert request["message"] == "OK?" and request["missing"] == ["approved"]


# --- through the PlanRunner ----------------------------------------------------------


def _plan() -> Plan:
    return Plan.model_validate(
        {
            "apiVersion": "v1",
            "id": "interactive_plan",
            "version": "1.0.0",
            "graph": [
                {
                    "id": "collect_inputs",
                    "block": "ui.interactive_input@^1",
                    "in": {
                        "mode": "mixed",
                        "message": "照合に必要な入力を提供してください",
                        "requirements": REQUIREMENTS,
                    },
                    "out": {"collected_data": "collected"},
                },
                {
                    "id": "note",
                    "block": "text.template",
                    "in": {
                        "template": "{region}: {amount}",
                        "values": {
                            "region": "${collect_inputs.collected.region}",
                            "amount": "${collect_inputs.collected.amount}",
                        },
                    },
                    "out": {"text": "text"},
                },
            ],
            "exports": [{"from": "note.text", "as": "note"}],
        }
    )


def test_a_plan_pauses_asks_again_for_missing_answers_then_succeeds(
    catalog: BlockCatalog, tmp_path: Path
) -> None:
    plan = _plan()
    assert list(PlanValidator(catalog, env={}).validate(plan).errors) == []
    runner = PlanRunner(catalog, Settings(), runs_dir=tmp_path / "runs", env={})

    first = runner.start(plan)
    assert first.status == "paused"
    [waiting] = first.waiting
    assert waiting["node_id"] == "collect_inputs"
    assert waiting["block"] == "ui.interactive_input@^1"
    assert [f["id"] for f in waiting["request"]["fields"]] == [r["id"] for r in REQUIREMENTS]

    partial = runner.resume(first.run_id, answers={"collect_inputs": {"region": "関東"}})
    assert partial.status == "paused"
    [waiting] = partial.waiting
    assert waiting["request"]["missing"] == ["evidence_zip", "amount", "proceed"]

    answers = {"evidence_zip": ZIP, "region": "関東", "amount": 1200, "proceed": True}
    done = runner.resume(first.run_id, answers={"collect_inputs": answers})
    assert done.status == "success", done.errors
    assert done.outputs["collect_inputs"]["collected"] == {
        **answers,
        "memo": None,
        "rate": 0.1,
    }
    assert done.outputs["note"]["text"] == "関東: 1200"


def test_an_approval_step_asks_for_an_optional_comment() -> None:
    from keiri_agent.blocks.interactive_input import mode_fields

    fields = mode_fields({"mode": "confirm", "approval": {"not_starter": True}})
    assert [(f["id"], f["required"]) for f in fields] == [("approved", True), ("comment", False)]
    assert [f["id"] for f in mode_fields({"mode": "confirm"})] == ["approved"]
