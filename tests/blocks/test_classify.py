"""ai.classify: labels constrained to the list, re-asks, batches, offline error."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from block_harness import CATALOG, failure, make_context
from pydantic import ValidationError

from keiri_agent.blocks.base import BlockContext
from keiri_agent.blocks.classify import BATCH_SIZE, ClassifyBlock, batch_model
from keiri_agent.config import Settings
from keiri_agent.errors import BlockError, BlockErrorCode
from keiri_agent.llm.testing import ScriptedChatModel

LABELS = ["旅費交通費", "会議費", "消耗品費"]
RECORDS = [
    {"摘要": "タクシー代 新宿→品川", "金額": 2300},
    {"摘要": "打合せ コーヒー代", "金額": 900},
    {"摘要": "コピー用紙", "金額": 1200},
]


def ctx(settings: Settings | None = None) -> BlockContext:
    return BlockContext(
        run_id="run",
        plan_id="plan",
        node_id="classify",
        settings=settings or Settings(provider="offline"),
        logger=logging.getLogger("test"),
    )


def block(model: ScriptedChatModel, reasks: int | None = None) -> ClassifyBlock:
    return ClassifyBlock(chat_model_factory=lambda _settings: model, reasks=reasks)


def answer(*labels: str, start: int = 1, reason: bool = False) -> dict[str, Any]:
    items = []
    for number, label in enumerate(labels, start=start):
        item: dict[str, Any] = {"number": number, "label": label}
        if reason:
            item["reason"] = f"理由{number}"
        items.append(item)
    return {"items": items}


def test_labels_are_written_in_order_with_counts() -> None:
    model = ScriptedChatModel([answer("旅費交通費", "会議費", "消耗品費")])
    out = block(model).run({"records": RECORDS, "labels": LABELS}, ctx())
    assert [row["分類"] for row in out["records"]] == ["旅費交通費", "会議費", "消耗品費"]
    assert out["records"][0]["摘要"] == "タクシー代 新宿→品川"
    assert out["summary"] == {
        "total": 3,
        "classified": 3,
        "failed": 0,
        "counts": {"旅費交通費": 1, "会議費": 1, "消耗品費": 1},
        "errors": [],
    }
    prompt = model.prompts[0]
    assert "[1] 摘要: タクシー代 新宿→品川, 金額: 2300" in prompt
    assert '"旅費交通費", "会議費", "消耗品費"' in prompt


def test_the_schema_allows_only_the_labels() -> None:
    schema = batch_model(LABELS, [1, 2], with_reason=False)
    item = schema.model_json_schema()["$defs"]["RecordLabel"]
    assert item["properties"]["label"]["enum"] == LABELS
    with pytest.raises(ValidationError):
        schema.model_validate(answer("旅費交通費", "交際費"))
    with pytest.raises(ValidationError, match="exactly once"):
        schema.model_validate(answer("旅費交通費"))


def test_a_label_outside_the_list_is_reasked_and_never_stored() -> None:
    model = ScriptedChatModel(
        [answer("旅費交通費", "交際費", "消耗品費"), answer("旅費交通費", "会議費", "消耗品費")]
    )
    out = block(model, reasks=1).run({"records": RECORDS, "labels": LABELS}, ctx())
    assert len(model.calls) == 2
    assert [row["分類"] for row in out["records"]] == ["旅費交通費", "会議費", "消耗品費"]
    assert "交際費" not in str(out)


def test_a_batch_that_keeps_answering_outside_the_list_is_refused() -> None:
    records = [{"摘要": f"項目{i}"} for i in range(BATCH_SIZE + 1)]
    good = answer(*["消耗品費"] * BATCH_SIZE)

    def respond(messages: list[Any], tools: list[str]) -> dict[str, Any]:
        if f"[{BATCH_SIZE + 1}]" in str(messages[1].content):
            return answer("交際費", start=BATCH_SIZE + 1)  # never a valid label
        return good

    model = ScriptedChatModel(respond=respond)
    out = block(model, reasks=1).run(
        {"records": records, "labels": LABELS, "max_concurrency": 2}, ctx()
    )
    assert [row["分類"] for row in out["records"]] == ["消耗品費"] * BATCH_SIZE + [None]
    assert out["summary"]["classified"] == BATCH_SIZE and out["summary"]["failed"] == 1
    [error] = out["summary"]["errors"]
    assert error["rows"] == [BATCH_SIZE + 1, BATCH_SIZE + 1]


def test_reason_column_and_text_columns() -> None:
    model = ScriptedChatModel([answer("旅費交通費", "会議費", "消耗品費", reason=True)])
    out = block(model).run(
        {
            "records": RECORDS,
            "labels": LABELS,
            "text_columns": ["摘要"],
            "output_column": "勘定科目",
            "reason_column": "理由",
            "instruction": "経費の摘要から勘定科目を選んでください",
        },
        ctx(),
    )
    assert [row["理由"] for row in out["records"]] == ["理由1", "理由2", "理由3"]
    assert out["records"][2]["勘定科目"] == "消耗品費"
    prompt = model.prompts[0]
    assert "経費の摘要から勘定科目を選んでください" in prompt and "金額" not in prompt


def test_every_batch_failing_is_an_api_error() -> None:
    model = ScriptedChatModel([answer("交際費", "交際費", "交際費")] * 2)
    with pytest.raises(BlockError) as caught:
        block(model, reasks=1).run({"records": RECORDS, "labels": LABELS}, ctx())
    assert caught.value.code == BlockErrorCode.API_ERROR


def test_offline_is_a_clear_api_error() -> None:
    with pytest.raises(BlockError) as caught:
        ClassifyBlock().run(
            {"records": RECORDS, "labels": LABELS}, ctx(Settings(provider="offline"))
        )
    assert caught.value.code == BlockErrorCode.API_ERROR
    assert "LLM の設定が必要" in caught.value.message
    assert caught.value.hint


def test_cancelled_run_stops() -> None:
    context = ctx()
    context.cancel_event.set()
    with pytest.raises(BlockError) as caught:
        block(ScriptedChatModel([answer(*LABELS)])).run(
            {"records": RECORDS, "labels": LABELS}, context
        )
    assert caught.value.code == BlockErrorCode.CANCELLED


def test_bad_inputs_are_refused() -> None:
    error = failure(
        "ai.classify", make_context(), records=RECORDS, labels=LABELS, text_columns=["メモ"]
    )
    assert error.details["column"] == "メモ"
    with pytest.raises(BlockError, match="labels"):
        block(ScriptedChatModel()).run({"records": RECORDS, "labels": []}, ctx())


def test_dry_run_sample_is_what_the_block_returns() -> None:
    spec = CATALOG.resolve("ai.classify")
    samples = spec.dry_run_samples
    model = ScriptedChatModel([answer("旅費交通費")])
    out = block(model).run({**spec.input_defaults(), **samples["inputs"]}, ctx())
    assert out == samples["outputs"]
