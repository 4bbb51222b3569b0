"""``ai.process_llm``: ask the configured LLM for structured data per file or per group.

The Plan gives an ``output_schema`` (seed 002 §4): a mapping of field name to a
JSON-Schema-like schema or a shorthand type (``string``, ``integer``, ``number``,
``boolean``, ``array``, ``object``). It becomes a Pydantic model
(:func:`schema_model`), and every file (or every group of files, with
``group_key``) is sent to the model with its text cut to ``per_file_chars``, at
most ``max_concurrency`` calls at a time. Answers come back in input order.

Fields listed in an object's ``required`` are required and non-null; all other
fields are optional and may be null (the model is told to use null for what the
documents do not say).

Failures: a unit (file or group) whose call fails — service error, or no valid
answer after the re-asks of :func:`~keiri_agent.llm.invoke_structured` — is
listed in ``summary.errors``; a file whose text could not be extracted
(``error`` set by ``file.parse_zip_2tier``) is listed there too and not sent. With
``group_key``, a group whose other files are readable is still answered, but the
prompt names the unreadable file (so the model knows the group is incomplete) and
``summary.errors`` lists it with its ``group`` and ``file``; ``summary.failed``
counts the units (files or groups) without an answer.
When every call fails, or no LLM is configured, the block fails with
``API_ERROR``; there is never a made-up result.

The block calls an outside service but changes nothing, so its spec says
``side_effects: false`` (a dry run never executes blocks anyway).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, ConfigDict, Field, create_model

from keiri_agent.blocks.base import BlockContext, ProcessingBlock
from keiri_agent.blocks.files import positive_int
from keiri_agent.blocks.records import invalid, kind_label
from keiri_agent.config import Settings
from keiri_agent.errors import BlockError, BlockErrorCode, ConfigurationError, LLMError
from keiri_agent.llm.factory import chat_model
from keiri_agent.llm.structured import invoke_structured

ChatModelFactory = Callable[[Settings], BaseChatModel]
"""Builds the chat model from the run's settings (tests inject a scripted model)."""

SCALAR_TYPES: dict[str, Any] = {
    "string": str,
    "integer": int,
    "number": float,
    "boolean": bool,
}
TYPE_NAMES = (*SCALAR_TYPES, "array", "object")
MAX_SCHEMA_DEPTH = 8
MODEL_NAME = "ExtractionResult"

DEFAULT_SYSTEM_PROMPT = (
    "You extract information from business documents (invoices, receipts, bank "
    "statements, contracts). Follow the instruction, answer only from the documents "
    "given, and use null for anything they do not state. Never invent values. "
    "Answer with the requested structure only."
)


# --------------------------------------------------------------------------- schema


def schema_model(output_schema: Any, *, name: str = MODEL_NAME) -> type[BaseModel]:
    """The Pydantic model for a Plan's ``output_schema``.

    Accepts ``{field: schema}`` where a schema is a type name (``"integer"``) or a
    mapping (``{type: object, properties: {...}, required: [...]}``,
    ``{type: array, items: ...}``, ``description``), or a whole object schema
    ``{type: object, properties: {...}}``.

    Raises:
        BlockError: INPUT_VALIDATION_FAILED naming the offending field.
    """
    if not isinstance(output_schema, Mapping) or not output_schema:
        raise invalid(
            "output_schema には「項目名: 型」の対応を 1 つ以上指定してください",
            hint="例: {取引先: string, 金額: integer}",
            field="output_schema",
        )
    if _is_object_schema(output_schema):
        properties = output_schema.get("properties")
        required = output_schema.get("required", [])
        if not isinstance(properties, Mapping) or not properties:
            raise invalid(
                "type: object の output_schema には properties（項目の一覧）が必要です",
                hint="例: {type: object, properties: {取引先: {type: string}}}",
                field="output_schema",
            )
        return _object_model(properties, required, name, "output_schema", 0)
    return _object_model(output_schema, [], name, "output_schema", 0)


def _is_object_schema(schema: Mapping[str, Any]) -> bool:
    """A whole JSON object schema rather than a mapping of field names."""
    allowed = {"type", "properties", "required", "description", "title"}
    return (
        schema.get("type") == "object"
        and isinstance(schema.get("properties"), Mapping)
        and set(schema) <= allowed
    )


def _object_model(
    properties: Mapping[str, Any], required: Any, name: str, path: str, depth: int
) -> type[BaseModel]:
    if depth > MAX_SCHEMA_DEPTH:
        raise invalid(
            f"{path}: 入れ子が深すぎます（{MAX_SCHEMA_DEPTH} 段まで）",
            hint="項目の入れ子を浅くしてください",
            field=path,
        )
    if not isinstance(required, list) or not all(isinstance(item, str) for item in required):
        raise invalid(
            f"{path}.required は必須の項目名のリストで指定してください",
            hint="例: required: [取引先, 金額]",
            field=path,
        )
    unknown = sorted(set(required) - {str(key) for key in properties})
    if unknown:
        raise invalid(
            f"{path}.required に properties にない項目があります: {', '.join(unknown)}",
            hint="properties に項目を加えるか、required から外してください",
            field=path,
        )
    fields: dict[str, Any] = {}
    for index, (key, schema) in enumerate(properties.items()):
        if not isinstance(key, str) or not key.strip():
            raise invalid(
                f"{path}: 項目名は空でない文字列にしてください（指定されたのは {key!r}）",
                field=path,
            )
        field_path = f"{path}.{key}"
        annotation, description = _field_type(schema, f"{name}_{index}", field_path, depth)
        # Internal names are always identifiers; the Plan's name is the alias.
        if key in required:
            info = Field(alias=key, description=description)
        else:
            annotation = annotation | None
            info = Field(default=None, alias=key, description=description)
        fields[f"f{index}"] = (annotation, info)
    config = ConfigDict(populate_by_name=True, title=name)
    model: type[BaseModel] = create_model(name, __config__=config, **fields)
    return model


def _field_type(schema: Any, name: str, path: str, depth: int) -> tuple[Any, str | None]:
    """The annotation and description of one field's schema."""
    if isinstance(schema, str):
        spec: Mapping[str, Any] = {"type": schema}
    elif isinstance(schema, Mapping):
        spec = schema
    else:
        raise invalid(
            f"{path}: 項目の型は型名か {{type: ...}} の形で指定してください"
            f"（指定されたのは {kind_label(schema)}）",
            hint=f"使える型: {', '.join(TYPE_NAMES)}",
            field=path,
        )
    description = spec.get("description")
    description = description if isinstance(description, str) else None
    kind = spec.get("type")
    if isinstance(kind, str) and kind in SCALAR_TYPES:
        return SCALAR_TYPES[kind], description
    if kind == "array":
        items = spec.get("items")
        if items is None:
            return list[Any], description
        item_type, _ = _field_type(items, f"{name}_item", f"{path}[]", depth + 1)
        return list[item_type], description  # type: ignore[valid-type]
    if kind == "object":
        properties = spec.get("properties")
        if properties is None or (isinstance(properties, Mapping) and not properties):
            return dict[str, Any], description
        if not isinstance(properties, Mapping):
            raise invalid(f"{path}.properties は「項目名: 型」の対応で指定してください", field=path)
        required = spec.get("required", [])
        return _object_model(properties, required, name, path, depth + 1), description
    raise invalid(
        f"{path}: 型 {kind!r} は使えません",
        hint=f"使える型: {', '.join(TYPE_NAMES)}",
        field=path,
    )


# --------------------------------------------------------------------------- units


@dataclass(frozen=True)
class _Unit:
    """One LLM call: a file, or the files of a group."""

    key: str  # "file" or "group"
    label: str
    files: tuple[Mapping[str, Any], ...]


def _files(evidence: Any) -> list[Mapping[str, Any]]:
    if not isinstance(evidence, Mapping) or not isinstance(evidence.get("files"), list):
        raise invalid(
            "evidence_data は files（ファイルのリスト）を持つオブジェクトで渡してください",
            hint="file.parse_zip_2tier の evidence_data 出力か、{files: [{name, text}]} を"
            "つないでください",
            field="evidence_data",
        )
    files = evidence["files"]
    if not files:
        raise invalid(
            "evidence_data に処理するファイルがありません",
            hint="アップロードした ZIP に読めるファイルが入っているか確かめてください",
            field="evidence_data.files",
        )
    for index, file in enumerate(files):
        if not isinstance(file, Mapping):
            raise invalid(
                f"evidence_data.files の {index + 1} 番目が {kind_label(file)} です。"
                "各ファイルは {name, text} のオブジェクトにしてください",
                field=f"evidence_data.files[{index}]",
            )
        if not isinstance(file.get("text", ""), str):
            raise invalid(
                f"evidence_data.files の {index + 1} 番目の text は文字列にしてください",
                field=f"evidence_data.files[{index}].text",
            )
    return list(files)


def _file_label(file: Mapping[str, Any], index: int) -> str:
    for key in ("path", "name"):
        value = file.get(key)
        if isinstance(value, str) and value:
            return value
    return f"file #{index + 1}"


def _units(files: Sequence[Mapping[str, Any]], group_key: str | None) -> list[_Unit]:
    if group_key is None:
        return [_Unit("file", _file_label(file, i), (file,)) for i, file in enumerate(files)]
    if not any(group_key in file for file in files):
        raise invalid(
            f"group_key に指定した {group_key!r} を持つファイルがありません",
            hint="file.parse_zip_2tier の evidence_data では group_key: group と指定します",
            field="group_key",
        )
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for file in files:
        value = file.get(group_key)
        groups.setdefault("" if value is None else str(value), []).append(file)
    return [_Unit("group", label, tuple(members)) for label, members in groups.items()]


def _text_input(inputs: Mapping[str, Any], name: str) -> str | None:
    value = inputs.get(name)
    if value is None:
        return None
    if not isinstance(value, str):
        raise invalid(
            f"{name} は文字列で指定してください（指定されたのは {kind_label(value)}）", field=name
        )
    return value if value.strip() else None


def _instruction(inputs: Mapping[str, Any]) -> str:
    text = _text_input(inputs, "prompt") or _text_input(inputs, "instruction")
    if text is None:
        raise invalid(
            "prompt（または instruction）に、ファイルから何を読み取るかを書いてください",
            hint="例: prompt: 請求書から取引先と金額を抽出",
            field="prompt",
        )
    return text


# --------------------------------------------------------------------------- block


class ProcessLLMBlock(ProcessingBlock):
    """``ai.process_llm``: structured LLM extraction per file or per group.

    Args:
        chat_model_factory: Builds the chat model from the run's settings;
            defaults to :func:`keiri_agent.llm.chat_model`.
        reasks: Re-asks after an invalid structured reply (per unit); default
            ``settings.llm.structured_output_reasks``. The structured-output method is
            ``settings.llm.structured_output_method``.
    """

    def __init__(
        self, chat_model_factory: ChatModelFactory | None = None, reasks: int | None = None
    ):
        self._factory: ChatModelFactory = chat_model_factory or chat_model
        self._reasks = reasks

    def validate(self, inputs: Mapping[str, Any], ctx: BlockContext) -> None:
        _instruction(inputs)
        schema_model(inputs.get("output_schema"))

    def run(self, inputs: Mapping[str, Any], ctx: BlockContext) -> dict[str, Any]:
        instruction = _instruction(inputs)
        schema = schema_model(inputs.get("output_schema"))
        system_prompt = _text_input(inputs, "system_prompt") or DEFAULT_SYSTEM_PROMPT
        per_file_chars = positive_int(inputs, "per_file_chars", 1500)
        max_concurrency = positive_int(inputs, "max_concurrency", 4)
        group_key = _text_input(inputs, "group_key")
        files = _files(inputs.get("evidence_data"))
        units = _units(files, group_key)
        key = units[0].key
        clashes = {str(info.alias) for info in schema.model_fields.values()} & {key}
        if clashes:
            raise invalid(
                f"output_schema の項目名 {key!r} は結果の各件の名前に使うため、項目名に使えません",
                hint=f"項目名を変えてください（例: {key}_name）",
                field=f"output_schema.{key}",
            )
        model = self._model(ctx)

        errors: list[dict[str, Any] | None] = [None] * len(units)
        unreadable: list[dict[str, Any]] = []  # files left out of a group that was answered
        sendable: list[tuple[int, _Unit]] = []
        for index, unit in enumerate(units):
            usable = tuple(file for file in unit.files if not file.get("error"))
            if usable:
                sendable.append((index, unit))
                unreadable += [
                    _file_error(unit, file, position)
                    for position, file in enumerate(unit.files)
                    if file.get("error")
                ]
            else:
                errors[index] = _extraction_error(unit)

        settings = ctx.settings
        reasks = settings.llm.structured_output_reasks if self._reasks is None else self._reasks

        def call(unit: _Unit) -> dict[str, Any]:
            ctx.check_cancelled()
            messages = _messages(system_prompt, instruction, unit, per_file_chars)
            answer = invoke_structured(
                model,
                schema,
                messages,
                reasks=reasks,
                method=settings.llm.structured_output_method,
            )
            return answer.model_dump(mode="json", by_alias=True)

        answers: list[dict[str, Any] | None] = [None] * len(units)
        if sendable:
            workers = min(max_concurrency, len(sendable))
            with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="process_llm") as pool:
                futures = [(index, unit, pool.submit(call, unit)) for index, unit in sendable]
                try:
                    for index, unit, future in futures:
                        try:
                            answers[index] = future.result()
                        except LLMError as error:
                            errors[index] = {
                                unit.key: unit.label,
                                "code": error.code,
                                "message": error.message,
                                "hint": error.hint,
                            }
                except BaseException:
                    pool.shutdown(wait=True, cancel_futures=True)
                    raise

        items = [
            {unit.key: unit.label, **answer}
            for unit, answer in zip(units, answers, strict=True)
            if answer is not None
        ]
        failures = [error for error in errors if error is not None] + unreadable
        if sendable and not items:
            first = failures[0]
            raise BlockError(
                BlockErrorCode.API_ERROR,
                f"LLM の呼び出しがすべて失敗しました（{len(units)} 件中 {len(failures)} 件）:"
                f" {first['message']}",
                details={"errors": failures},
                hint=first.get("hint"),
                recoverable=True,
            )
        if not sendable:
            raise invalid(
                "LLM に送れるテキストがありません。どのファイルからも文字を取り出せませんでした",
                hint="evidence_data の各ファイルのエラー（未対応の形式・破損・暗号化など）"
                "を確かめ、"
                "読めるファイルをアップロードしてください",
                field="evidence_data",
                errors=failures,
            )
        summary = {
            "total": len(units),
            "succeeded": len(items),
            "failed": len(units) - len(items),
            "errors": failures,
        }
        return {"results": {"items": items}, "summary": summary}

    def _model(self, ctx: BlockContext) -> BaseChatModel:
        return block_chat_model(self._factory, ctx.settings, "ai.process_llm")


def block_chat_model(factory: ChatModelFactory, settings: Settings, block_id: str) -> BaseChatModel:
    """The chat model an LLM block calls; without a usable LLM configuration an
    ``API_ERROR`` naming the block, with the configuration's Japanese reason and fix
    (not recoverable: re-running with the same settings fails the same way)."""
    try:
        return factory(settings)
    except ConfigurationError as error:
        raise BlockError(
            BlockErrorCode.API_ERROR,
            f"{block_id} には LLM の設定が必要です: {error.message}",
            details={"error_code": error.code},
            hint=error.hint,
            recoverable=False,  # a re-run repeats it: the settings must change first
        ) from error


_NO_TEXT_MESSAGE = "ファイルから文字を取り出せませんでした"


def _extraction_error(unit: _Unit) -> dict[str, Any]:
    cause = unit.files[0].get("error") if unit.files else None
    cause = cause if isinstance(cause, Mapping) else {}
    return {
        unit.key: unit.label,
        "code": str(cause.get("code") or "NO_TEXT"),
        "message": str(cause.get("message") or _NO_TEXT_MESSAGE),
        "hint": cause.get("hint"),
    }


def _file_error(unit: _Unit, file: Mapping[str, Any], index: int) -> dict[str, Any]:
    """A file of an answered group that was left out (its text could not be extracted)."""
    error = file.get("error")
    cause: Mapping[str, Any] = error if isinstance(error, Mapping) else {}
    return {
        unit.key: unit.label,
        "file": _file_label(file, index),
        "code": str(cause.get("code") or "NO_TEXT"),
        "message": "グループの回答から除きました: " + str(cause.get("message") or _NO_TEXT_MESSAGE),
        "hint": cause.get("hint"),
    }


def _messages(system_prompt: str, instruction: str, unit: _Unit, limit: int) -> list[BaseMessage]:
    parts = [instruction, ""]
    for index, file in enumerate(unit.files):
        if file.get("error"):  # the model must know the group is incomplete
            cause = file["error"] if isinstance(file["error"], Mapping) else {}
            reason = cause.get("message") or "テキストを取得できません"
            parts.extend(
                [f"### File: {_file_label(file, index)} (読めなかったため内容なし: {reason})", ""]
            )
            continue
        text = str(file.get("text") or "")
        cut = len(text) > limit or bool(file.get("truncated"))
        header = f"### File: {_file_label(file, index)}"
        if unit.key == "group":
            header += f" (group: {unit.label})"
        if cut:
            header += f" (excerpt: first {min(len(text), limit)} characters)"
        parts.extend([header, text[:limit], ""])
    return [SystemMessage(content=system_prompt), HumanMessage(content="\n".join(parts).rstrip())]
