"""``ai.classify``: the configured LLM picks one label per record from a fixed list.

Records go to the model in batches of :data:`BATCH_SIZE` (one structured call per
batch, at most ``max_concurrency`` at a time). The answer's schema makes the
label an enum of the given labels and requires one answer per record number of
the batch, so a label outside the list (or a missing or extra record) fails
validation and is re-asked (:func:`~keiri_agent.llm.invoke_structured`); it is
never stored. A batch still without a valid answer leaves its records
unlabelled (null) and is listed in ``summary.errors``; when every batch fails, or
no LLM is configured (offline), the block fails with ``API_ERROR``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, Field, create_model, model_validator

from keiri_agent.blocks.base import BlockContext, ProcessingBlock
from keiri_agent.blocks.files import positive_int
from keiri_agent.blocks.llm import ChatModelFactory, block_chat_model
from keiri_agent.blocks.records import (
    check_columns,
    columns_of,
    invalid,
    records_input,
    string_list,
)
from keiri_agent.errors import BlockError, BlockErrorCode, LLMError
from keiri_agent.llm.factory import chat_model
from keiri_agent.llm.structured import invoke_structured

BATCH_SIZE = 20
"""Records per LLM call."""
MAX_LABELS = 200
MAX_CELL_CHARS = 500
"""A cell's text is cut to this many characters in the prompt."""

SYSTEM_PROMPT = (
    "You classify records of Japanese back-office data (expenses, invoices, journal "
    "lines). For every numbered record choose exactly one label from the allowed list, "
    "copied exactly; never invent a label. Answer for every record number given, once."
)


def batch_model(
    labels: Sequence[str], numbers: Sequence[int], with_reason: bool
) -> type[BaseModel]:
    """The answer schema of one batch: ``{items: [{number, label, reason?}]}``.

    ``label`` is an enum of ``labels``; the numbers must be exactly ``numbers``.
    """
    label_type = Literal[tuple(labels)]  # type: ignore[valid-type]
    fields: dict[str, Any] = {
        "number": (int, Field(description="the record number given in the prompt")),
        "label": (label_type, Field(description="one of the allowed labels, copied exactly")),
    }
    if with_reason:
        fields["reason"] = (str, Field(description="one short sentence: why this label"))
    item: type[BaseModel] = create_model("RecordLabel", **fields)
    expected = sorted(numbers)

    def every_record_once(answer: Any) -> Any:
        given = sorted(entry.number for entry in answer.items)
        if given != expected:
            raise ValueError(
                f"answer each record number exactly once: expected {expected}, got {given}"
            )
        return answer

    validators: dict[str, Any] = {
        "every_record_once": model_validator(mode="after")(every_record_once)
    }
    model: type[BaseModel] = create_model(
        "Classification",
        items=(list[item], Field(description="one entry per record")),  # type: ignore[valid-type]
        __validators__=validators,
    )
    return model


def _labels(inputs: Mapping[str, Any]) -> list[str]:
    value = inputs.get("labels")
    if not isinstance(value, list) or not value:
        raise invalid(
            "labels（選べる分類の一覧）を1つ以上指定してください",
            hint="例: labels: [旅費交通費, 会議費, 消耗品費]",
            field="labels",
        )
    labels: list[str] = []
    for index, label in enumerate(value):
        if not isinstance(label, str) or not label.strip():
            raise invalid(f"labels[{index}] が空か、文字列ではありません", field=f"labels[{index}]")
        if label not in labels:
            labels.append(label)
    if len(labels) > MAX_LABELS:
        raise invalid(f"labels は{MAX_LABELS}個までです（{len(labels)}個あります）", field="labels")
    return labels


def _column_name(inputs: Mapping[str, Any], name: str, default: str | None) -> str | None:
    value = inputs.get(name, default)
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise invalid(f"{name} には列名（文字列）を指定してください", field=name)
    return value


def _instruction(inputs: Mapping[str, Any]) -> str | None:
    value = inputs.get("instruction")
    if value is not None and not isinstance(value, str):
        raise invalid("instruction は文字列で指定してください", field="instruction")
    return (value.strip() or None) if value else None


def _cell(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text[:MAX_CELL_CHARS]


def _messages(
    labels: Sequence[str],
    instruction: str | None,
    rows: Sequence[tuple[int, Mapping[str, Any]]],
    columns: Sequence[str],
) -> list[BaseMessage]:
    lines = [instruction or "各レコードに最も合う分類を1つ選んでください。", ""]
    lines.append("選べる分類: " + json.dumps(list(labels), ensure_ascii=False))
    lines.append("")
    for number, row in rows:
        cells = ", ".join(f"{column}: {_cell(row.get(column))}" for column in columns)
        lines.append(f"[{number}] {cells}")
    return [SystemMessage(content=SYSTEM_PROMPT), HumanMessage(content="\n".join(lines))]


class ClassifyBlock(ProcessingBlock):
    """``ai.classify``: one label from ``labels`` per record, by the LLM.

    Args:
        chat_model_factory: Builds the chat model from the run's settings;
            defaults to :func:`keiri_agent.llm.chat_model` (tests inject a scripted model).
        reasks: Re-asks after an invalid reply; default ``settings.llm.structured_output_reasks``.
    """

    def __init__(
        self, chat_model_factory: ChatModelFactory | None = None, reasks: int | None = None
    ):
        self._factory: ChatModelFactory = chat_model_factory or chat_model
        self._reasks = reasks

    def validate(self, inputs: Mapping[str, Any], ctx: BlockContext) -> None:
        _labels(inputs)
        _column_name(inputs, "output_column", "分類")
        _column_name(inputs, "reason_column", None)
        _instruction(inputs)

    def run(self, inputs: Mapping[str, Any], ctx: BlockContext) -> dict[str, Any]:
        records = records_input(inputs)
        labels = _labels(inputs)
        output_column = _column_name(inputs, "output_column", "分類") or "分類"
        reason_column = _column_name(inputs, "reason_column", None)
        instruction = _instruction(inputs)
        max_concurrency = positive_int(inputs, "max_concurrency", 4)
        known = columns_of(records)
        text_columns = string_list(inputs, "text_columns", [])
        check_columns(text_columns, records, "text_columns")
        columns = text_columns or [c for c in known if c not in (output_column, reason_column)]
        if not records:
            return {"records": [], "summary": _summary(0, [], labels, [], output_column)}
        model = self._model(ctx)
        reasks = ctx.settings.llm.structured_output_reasks if self._reasks is None else self._reasks
        method = ctx.settings.llm.structured_output_method
        numbered = list(enumerate(records, start=1))
        batches = [numbered[i : i + BATCH_SIZE] for i in range(0, len(numbered), BATCH_SIZE)]

        def call(batch: list[tuple[int, dict[str, Any]]]) -> dict[int, dict[str, Any]]:
            ctx.check_cancelled()
            schema = batch_model(labels, [n for n, _ in batch], reason_column is not None)
            answer = invoke_structured(
                model,
                schema,
                _messages(labels, instruction, batch, columns),
                reasks=reasks,
                method=method,
            )
            return {entry["number"]: entry for entry in answer.model_dump()["items"]}

        answers: dict[int, dict[str, Any]] = {}
        errors: list[dict[str, Any]] = []
        workers = min(max_concurrency, len(batches))
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="classify") as pool:
            futures = [(batch, pool.submit(call, batch)) for batch in batches]
            try:
                for batch, future in futures:
                    try:
                        answers.update(future.result())
                    except LLMError as error:
                        errors.append(
                            {
                                "rows": [batch[0][0], batch[-1][0]],
                                "code": error.code,
                                "message": error.message,
                                "hint": error.hint,
                            }
                        )
            except BaseException:
                pool.shutdown(wait=True, cancel_futures=True)
                raise
        if not answers:
            first = errors[0]
            raise BlockError(
                BlockErrorCode.API_ERROR,
                f"LLM による分類がすべて失敗しました（{len(errors)}回）: {first['message']}",
                details={"errors": errors},
                hint=first.get("hint")
                or "LLM の設定（API キー・モデル名）と labels を確認してください",
                recoverable=True,
            )
        result: list[dict[str, Any]] = []
        for number, row in numbered:
            entry = answers.get(number)
            labelled = {**row, output_column: entry["label"] if entry else None}
            if reason_column is not None:
                labelled[reason_column] = entry.get("reason") if entry else None
            result.append(labelled)
        summary = _summary(len(records), result, labels, errors, output_column)
        return {"records": result, "summary": summary}

    def _model(self, ctx: BlockContext) -> BaseChatModel:
        return block_chat_model(self._factory, ctx.settings, "ai.classify")


def _summary(
    total: int,
    records: Sequence[Mapping[str, Any]],
    labels: Sequence[str],
    errors: list[dict[str, Any]],
    output_column: str,
) -> dict[str, Any]:
    counts = dict.fromkeys(labels, 0)
    for row in records:
        label = row.get(output_column)
        if label is not None:
            counts[label] += 1
    classified = sum(counts.values())
    return {
        "total": total,
        "classified": classified,
        "failed": total - classified,
        "counts": counts,
        "errors": errors,
    }
