"""ai.process_llm: output_schema → Pydantic, per-file/per-group calls, concurrency, errors."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from pydantic import ValidationError

from keiri_agent.blocks.base import BlockContext
from keiri_agent.blocks.llm import ProcessLLMBlock, schema_model
from keiri_agent.config import Settings
from keiri_agent.errors import BlockError, BlockErrorCode
from keiri_agent.llm.testing import ScriptedChatModel, StubOpenAIServer
from keiri_agent.plans.catalog.catalog import BlockCatalog


def make_ctx(settings: Settings | None = None) -> BlockContext:
    return BlockContext(
        run_id="run",
        plan_id="plan",
        node_id="process_llm",
        settings=settings or Settings(provider="offline"),
        logger=logging.getLogger("test"),
    )


def scripted_block(model: ScriptedChatModel) -> ProcessLLMBlock:
    return ProcessLLMBlock(chat_model_factory=lambda _settings: model)


def file_entry(group: str, name: str, text: str, error: Any = None) -> dict[str, Any]:
    return {
        "group": group,
        "path": f"{group}/{name}",
        "name": name,
        "size": len(text),
        "text": text,
        "truncated": False,
        "error": error,
    }


def inputs(files: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {
        "evidence_data": {"groups": [], "files": files, "skipped": []},
        "prompt": "請求書から取引先と金額を抽出",
        "output_schema": {"取引先": "string", "金額": "integer"},
        **extra,
    }


# --------------------------------------------------------------------------- schema


def test_shorthand_schema_builds_optional_fields() -> None:
    model = schema_model({"取引先": "string", "金額": "integer", "率": "number", "済": "boolean"})
    value = model.model_validate({"取引先": "A社", "金額": 12000, "率": 0.1, "済": True})
    assert value.model_dump(by_alias=True) == {
        "取引先": "A社",
        "金額": 12000,
        "率": 0.1,
        "済": True,
    }
    assert model.model_validate({}).model_dump(by_alias=True)["金額"] is None
    with pytest.raises(ValidationError):
        model.model_validate({"金額": "abc"})


def test_full_schema_with_nested_objects_and_arrays() -> None:
    model = schema_model(
        {
            "results": {
                "type": "object",
                "properties": {
                    "items": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {"file": "string", "count": "integer"},
                            "required": ["count"],
                        },
                    }
                },
            },
            "tags": {"type": "array", "items": "string", "description": "labels"},
            "extra": "object",
        }
    )
    data = {"results": {"items": [{"file": "a.txt", "count": 2}]}, "tags": ["x"], "extra": {"k": 1}}
    assert model.model_validate(data).model_dump(by_alias=True) == data
    with pytest.raises(ValidationError):
        model.model_validate({"results": {"items": [{"file": "a.txt"}]}})  # count required
    schema = model.model_json_schema()
    assert set(schema["properties"]) == {"results", "tags", "extra"}


def test_whole_object_schema_is_accepted() -> None:
    model = schema_model(
        {"type": "object", "properties": {"total": "integer"}, "required": ["total"]}
    )
    assert model.model_validate({"total": 3}).model_dump(by_alias=True) == {"total": 3}
    with pytest.raises(ValidationError):
        model.model_validate({})


@pytest.mark.parametrize(
    ("schema", "field"),
    [
        ({"金額": "int"}, "output_schema.金額"),
        (
            {"x": {"type": "array", "items": {"type": "object", "properties": {"y": "date"}}}},
            "x[].y",
        ),
        ({"x": 3}, "output_schema.x"),
        ({}, "output_schema"),
    ],
)
def test_invalid_schema_names_the_field(schema: dict[str, Any], field: str) -> None:
    with pytest.raises(BlockError) as caught:
        schema_model(schema)
    assert caught.value.code == BlockErrorCode.INPUT_VALIDATION_FAILED
    assert field in caught.value.message


def test_block_validate_rejects_bad_schema_and_missing_prompt() -> None:
    block = ProcessLLMBlock()
    with pytest.raises(BlockError, match=r"型 .* は使えません"):
        block.validate(inputs([], output_schema={"a": "text"}), make_ctx())
    bad = inputs([])
    del bad["prompt"]
    with pytest.raises(BlockError, match="prompt"):
        block.validate(bad, make_ctx())


# --------------------------------------------------------------------------- calls


def test_one_call_per_file_in_input_order() -> None:
    model = ScriptedChatModel([{"取引先": "A社", "金額": 100}, {"取引先": "B社", "金額": 200}])
    files = [file_entry("A社", "1.txt", "請求 100円"), file_entry("B社", "2.txt", "請求 200円")]
    outputs = scripted_block(model).run(inputs(files, max_concurrency=1), make_ctx())
    assert outputs["results"] == {
        "items": [
            {"file": "A社/1.txt", "取引先": "A社", "金額": 100},
            {"file": "B社/2.txt", "取引先": "B社", "金額": 200},
        ]
    }
    assert outputs["summary"] == {"total": 2, "succeeded": 2, "failed": 0, "errors": []}
    assert len(model.calls) == 2
    assert "請求書から取引先と金額を抽出" in model.prompts[0]
    assert "請求 100円" in model.prompts[0] and "請求 200円" not in model.prompts[0]


def test_instruction_used_when_prompt_absent_and_system_prompt_override() -> None:
    model = ScriptedChatModel([{"取引先": "A社"}])
    data = inputs([file_entry("A社", "1.txt", "x")], system_prompt="あなたは経理担当です")
    del data["prompt"]
    data["instruction"] = "取引先だけ"
    scripted_block(model).run(data, make_ctx())
    system, human = model.calls[0]
    assert system.content == "あなたは経理担当です"
    assert "取引先だけ" in str(human.content)


def test_one_call_per_group() -> None:
    model = ScriptedChatModel([{"取引先": "A社", "金額": 300}, {"取引先": "B社", "金額": 50}])
    files = [
        file_entry("A社", "1.txt", "alpha"),
        file_entry("B社", "3.txt", "gamma"),
        file_entry("A社", "2.txt", "beta"),
    ]
    outputs = scripted_block(model).run(
        inputs(files, group_key="group", max_concurrency=1), make_ctx()
    )
    assert [item["group"] for item in outputs["results"]["items"]] == ["A社", "B社"]
    assert outputs["summary"]["total"] == 2
    assert len(model.calls) == 2
    first, second = model.prompts
    assert "alpha" in first and "beta" in first and "gamma" not in first
    assert "gamma" in second and "alpha" not in second


def test_unknown_group_key_is_rejected() -> None:
    model = ScriptedChatModel([])
    with pytest.raises(BlockError, match="group_key"):
        scripted_block(model).run(
            inputs([file_entry("A", "1.txt", "x")], group_key="folder"), make_ctx()
        )


def test_calls_overlap_up_to_max_concurrency() -> None:
    model = ScriptedChatModel([{"取引先": "X", "金額": 1}] * 8, wait_for_concurrent=4)
    files = [file_entry("G", f"{i}.txt", f"text {i}") for i in range(8)]
    outputs = scripted_block(model).run(inputs(files, max_concurrency=4), make_ctx())
    assert outputs["summary"]["succeeded"] == 8
    assert [item["file"] for item in outputs["results"]["items"]] == [
        f"G/{i}.txt" for i in range(8)
    ]
    assert model.peak_in_flight == 4  # four calls at once, never more


def test_text_is_cut_to_per_file_chars() -> None:
    model = ScriptedChatModel([{"取引先": "A社"}])
    text = "A" * 50 + "B" * 50
    scripted_block(model).run(
        inputs([file_entry("G", "1.txt", text)], per_file_chars=50), make_ctx()
    )
    prompt = model.prompts[0]
    assert "A" * 50 in prompt
    assert "B" not in prompt.split("### File:", 1)[1].split("\n", 1)[1]
    assert "first 50 characters" in prompt


def test_failing_file_is_recorded_and_others_succeed() -> None:
    bad = {"取引先": "A社", "金額": "不明"}
    model = ScriptedChatModel([bad, bad, bad, {"取引先": "B社", "金額": 5}])
    files = [file_entry("A社", "1.txt", "x"), file_entry("B社", "2.txt", "y")]
    outputs = scripted_block(model).run(inputs(files, max_concurrency=1), make_ctx())
    assert outputs["results"]["items"] == [{"file": "B社/2.txt", "取引先": "B社", "金額": 5}]
    summary = outputs["summary"]
    assert (summary["total"], summary["succeeded"], summary["failed"]) == (2, 1, 1)
    [error] = summary["errors"]
    assert error["file"] == "A社/1.txt" and error["code"] == "LLM_ERROR"
    assert "3 回試しても" in error["message"]
    assert len(model.calls) == 4  # first attempt + 2 re-asks, then the second file


def test_file_with_extraction_error_is_not_sent() -> None:
    broken = {"code": "DOCUMENT_UNSUPPORTED", "message": "写真.jpg: not supported", "hint": "h"}
    model = ScriptedChatModel([{"取引先": "A社", "金額": 1}])
    files = [file_entry("A社", "写真.jpg", "", error=broken), file_entry("A社", "1.txt", "x")]
    outputs = scripted_block(model).run(inputs(files), make_ctx())
    assert len(model.calls) == 1
    assert outputs["summary"]["errors"] == [
        {
            "file": "A社/写真.jpg",
            "code": "DOCUMENT_UNSUPPORTED",
            "message": broken["message"],
            "hint": "h",
        }
    ]


def test_every_call_failing_is_an_api_error() -> None:
    model = ScriptedChatModel(["no structure"] * 3)
    with pytest.raises(BlockError) as caught:
        scripted_block(model).run(inputs([file_entry("A", "1.txt", "x")]), make_ctx())
    assert caught.value.code == BlockErrorCode.API_ERROR
    assert caught.value.details["errors"][0]["file"] == "A/1.txt"


def test_offline_provider_is_an_api_error_with_hint() -> None:
    with pytest.raises(BlockError) as caught:
        ProcessLLMBlock().run(
            inputs([file_entry("A", "1.txt", "x")]), make_ctx(Settings(provider="offline"))
        )
    assert caught.value.code == BlockErrorCode.API_ERROR
    assert caught.value.hint is not None and "OPENAI_API_KEY" in caught.value.hint


def test_empty_evidence_is_rejected() -> None:
    with pytest.raises(BlockError) as caught:
        scripted_block(ScriptedChatModel([])).run(inputs([]), make_ctx())
    assert caught.value.code == BlockErrorCode.INPUT_VALIDATION_FAILED


def test_real_chat_openai_path_against_stub_server() -> None:
    with StubOpenAIServer([{"取引先": "A社", "金額": 12000}]) as server:
        settings = Settings(
            provider="openai-compatible",
            openai_api_base=server.base_url,
            model="stub-model",
            retry_backoff_s=0.01,
        )
        outputs = ProcessLLMBlock().run(
            inputs([file_entry("A社", "請求書.txt", "請求金額 12,000円")]), make_ctx(settings)
        )
        [request] = server.chat_requests
    assert outputs["results"]["items"] == [
        {"file": "A社/請求書.txt", "取引先": "A社", "金額": 12000}
    ]
    tool = request.body["tools"][0]["function"]
    assert set(tool["parameters"]["properties"]) == {"取引先", "金額"}
    assert "請求金額 12,000円" in request.body["messages"][-1]["content"]


def test_spec_loads_in_catalog() -> None:
    catalog = BlockCatalog.discover()
    spec = catalog.resolve("ai.process_llm")
    assert spec.reference == "ai.process_llm@1.0.0"
    assert isinstance(catalog.load(spec), ProcessLLMBlock)


def test_a_group_with_an_unreadable_file_is_answered_and_the_file_is_reported() -> None:
    encrypted = {"code": "DOCUMENT_ENCRYPTED", "message": "the PDF is password-protected"}
    files = [
        file_entry("A社", "inv1.pdf", "請求書 A社 100円"),
        file_entry("A社", "inv2.pdf", "", error=encrypted),
        file_entry("B社", "inv3.pdf", "請求書 B社 50円"),
    ]
    model = ScriptedChatModel([{"取引先": "A社", "金額": 100}, {"取引先": "B社", "金額": 50}])

    out = scripted_block(model).run(inputs(files, group_key="group", max_concurrency=1), make_ctx())

    assert [item["group"] for item in out["results"]["items"]] == ["A社", "B社"]
    summary = out["summary"]
    assert (summary["total"], summary["succeeded"], summary["failed"]) == (2, 2, 0)
    (error,) = summary["errors"]
    assert error["group"] == "A社" and error["file"] == "A社/inv2.pdf"
    assert error["code"] == "DOCUMENT_ENCRYPTED" and "password-protected" in error["message"]
    # the model was told the group is missing a file
    assert (
        "A社/inv2.pdf (読めなかったため内容なし: the PDF is password-protected)"
        in (model.prompts[0])
    )
    assert "inv2" not in model.prompts[1]


def test_the_structured_output_settings_are_honoured() -> None:
    """KEIRI_AGENT_STRUCTURED_OUTPUT_REASKS / _METHOD reach the block's calls."""
    with StubOpenAIServer(["not json"] * 5) as server:
        settings = Settings(
            provider="openai-compatible",
            openai_api_base=server.base_url,
            model="stub-model",
            max_retries=0,
            structured_output_reasks=0,
            structured_output_method="json_mode",
        )
        error = None
        try:
            ProcessLLMBlock().run(
                inputs([file_entry("A社", "a.txt", "A社 1000円")]), make_ctx(settings)
            )
        except BlockError as caught:
            error = caught
        requests = server.chat_requests
    assert error is not None and error.code == BlockErrorCode.API_ERROR
    assert len(requests) == 1  # no re-ask with reasks=0 (the default would send 3)
    assert "tools" not in requests[0].body
    assert requests[0].body["response_format"] == {"type": "json_object"}
