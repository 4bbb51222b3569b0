"""The shapes the model answers in (seed 003 §5.2), built per call, and their mapping to a Plan.

``build_design_model(blocks)`` returns a Pydantic ``LLMDesignModel`` whose ``block``
is a ``Literal`` of exactly the given blocks and whose nodes are a union discriminated
on ``block`` (loops on ``type: loop``, subflows on ``type: subflow``): each block's
node model whitelists its ``in`` keys (the block's inputs) and ``out`` keys (its
outputs), so the JSON schema sent with ``function_calling`` lists nothing else.
``ai.process_llm`` nodes need a non-empty ``output_schema`` and a ``prompt`` or an
``instruction``. ``build_skeleton_model(blocks)`` is stage 1's shape: the flow as a
list of steps. Both carry ``questions``: what the model could not settle (they become
requirements later).

Loop bodies hold block nodes only (no loop in a loop, no subflow): the schema stays
flat (OpenAI tool schemas cannot recurse) and generated Plans stay readable.

``to_plan_dict(design)`` is the ONE place where the seed's shape meets the DSL
(docs/design.md "Generation with an LLM"):

* ``foreach: {items, var}`` → ``type: loop`` + ``foreach: {input, itemVar}``;
  ``while: {condition, max_iterations}`` → ``type: loop`` + ``while`` as is;
* ``in``/``out`` are the DSL's aliases, ``body.plan.graph`` as is;
* ``apiVersion: v1``, ``version: 0.1.0``;
* policy defaults of generated Plans (``GENERATED_POLICY``): ``on_error: halt``,
  ``retries: 1``, ``timeout_ms: 300000`` (5 minutes per block attempt); the seed's
  ``on_error: stop`` is the DSL's ``halt``;
* every ``${vars.name}`` a node reads and every question's ``var`` is declared in
  ``vars`` (``null`` unless the model gave a value), so ambiguous values are visible
  and the Design chat can fill them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    create_model,
    model_validator,
)

from keiri_agent.plans.catalog.catalog import BlockSpec

LLM_BLOCK = "ai.process_llm"
API_VERSION = "v1"
GENERATED_VERSION = "0.1.0"
GENERATED_POLICY: dict[str, Any] = {"on_error": "halt", "retries": 1, "timeout_ms": 300_000}
"""Policy defaults of generated Plans: stop at the first failure, retry a failed block
once (transient service errors), bound each block attempt at 5 minutes."""
DEFAULT_PLAN_ID = "generated_plan"
QUESTION_TYPES = ("text", "select", "number", "boolean", "file", "table", "enum")
NODE_ID_PATTERN = r"^[A-Za-z_][A-Za-z0-9_\-]*$"
PLAN_ID_CHARS = re.compile(r"[^A-Za-z0-9_\-]+")
VAR_REFERENCE = re.compile(r"\$\{\s*vars\.([A-Za-z_][A-Za-z0-9_]*)")
ON_ERROR_OF = {"stop": "halt", "halt": "halt", "continue": "continue", "retry": "retry"}


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


def _model(name: str, **definition: Any) -> type[BaseModel]:
    """``pydantic.create_model`` for field definitions built at run time (the fields and
    ``__config__``/``__base__``/``__validators__``/``__doc__`` as keywords)."""
    return create_model(name, **definition)


class DesignQuestion(_Strict):
    """Something the model could not settle: asked in the Design chat, answered into vars."""

    var: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$", description="the vars name it fills")
    question: str = Field(min_length=1, description="the question to the user, in Japanese")
    type: Literal["text", "select", "number", "boolean", "file", "table", "enum"] = "text"
    options: list[str] = Field(default_factory=list, description="choices for select/enum")


class DesignCondition(_Strict):
    expr: str = Field(min_length=1, description='e.g. "${check.count} > 0"')


class DesignForeach(_Strict):
    items: Any = Field(description="a ${...} reference to a list")
    var: str = Field(default="item", pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")


class DesignWhile(_Strict):
    condition: DesignCondition
    max_iterations: int = Field(ge=1, le=10_000)


class DesignExport(_Strict):
    source: str = Field(alias="from", min_length=3, description="<node>.<alias>")
    name: str = Field(alias="as", min_length=1)


class DesignLoopOut(_Strict):
    collect: str | None = Field(default=None, description="the body export gathered per item")


class DesignCall(_Strict):
    plan_id: str = Field(min_length=1)
    inputs: dict[str, Any] = Field(default_factory=dict)


class DesignSubflowOut(_Strict):
    exports: list[DesignExport] = Field(default_factory=list)


class DesignPolicy(_Strict):
    on_error: Literal["halt", "continue", "retry", "stop"] = "halt"
    retries: int = Field(default=GENERATED_POLICY["retries"], ge=0, le=10)
    timeout_ms: int = Field(default=GENERATED_POLICY["timeout_ms"], ge=1)


class DesignUI(_Strict):
    layout: list[str] = Field(default_factory=list, description="node ids in display order")


def port_type_label(port: Mapping[str, Any]) -> str:
    """A port's JSON type for people and prompts: ``string``, ``string | null``, ``any``."""
    declared = port.get("type")
    if isinstance(declared, str):
        return declared
    if isinstance(declared, list):
        return " | ".join(str(item) for item in declared)
    options = port.get("anyOf") or port.get("oneOf")
    if isinstance(options, list):
        labels = [port_type_label(option) for option in options if isinstance(option, Mapping)]
        return " | ".join(dict.fromkeys(labels)) or "any"
    return "any"


def _port_model(
    name: str, ports: Mapping[str, Mapping[str, Any]], *, required: Iterable[str] = ()
) -> type[BaseModel]:
    """An object model whose only keys are ``ports`` (aliases: port names may be any text)."""
    needed = set(required)
    fields: dict[str, Any] = {}
    for index, (port, spec) in enumerate(ports.items()):
        description = f"{port_type_label(spec)}: {spec.get('description') or ''}".strip()
        default: Any = ... if port in needed else None
        fields[f"p{index}"] = (Any, Field(default, alias=port, description=description[:300]))
    config = ConfigDict(extra="forbid", populate_by_name=True)
    return _model(name, __config__=config, **fields)


def _out_model(name: str, spec: BlockSpec) -> type[BaseModel]:
    fields: dict[str, Any] = {
        f"p{index}": (
            str | None,
            Field(
                None, alias=port, description=f"alias for output {port} ({port_type_label(ports)})"
            ),
        )
        for index, (port, ports) in enumerate(spec.outputs.items())
    }
    config = ConfigDict(extra="forbid", populate_by_name=True)
    return _model(name, __config__=config, **fields)


def _model_name(block_id: str) -> str:
    return "".join(part.capitalize() for part in re.split(r"[^A-Za-z0-9]+", block_id) if part)


def _require_prompt(model: BaseModel) -> BaseModel:
    values = model.model_dump(by_alias=True, exclude_unset=True)
    if not (values.get("prompt") or values.get("instruction")):
        raise ValueError(f"{LLM_BLOCK} needs a prompt or an instruction")
    if not isinstance(values.get("output_schema"), dict) or not values["output_schema"]:
        raise ValueError(f"{LLM_BLOCK} needs a non-empty output_schema object")
    return model


def _in_model(spec: BlockSpec) -> type[BaseModel]:
    name = f"{_model_name(spec.id)}In"
    if spec.id != LLM_BLOCK:
        return _port_model(name, spec.inputs)
    base = _port_model(f"{name}Ports", spec.inputs, required=["output_schema"])
    return _model(
        name,
        __base__=base,
        __validators__={"_prompt": model_validator(mode="after")(_require_prompt)},
    )


def block_node_model(spec: BlockSpec) -> type[BaseModel]:
    """The node model of one block: ``block`` fixed, ``in``/``out`` keys whitelisted."""
    stem = _model_name(spec.id)
    return _model(
        f"{stem}Node",
        __config__=ConfigDict(extra="forbid", populate_by_name=True),
        __doc__=(spec.description or spec.id).strip().splitlines()[0][:200],
        id=(str, Field(pattern=NODE_ID_PATTERN, max_length=100)),
        block=(Literal[spec.id], ...),
        description=(str | None, None),
        inputs=(_in_model(spec), Field(alias="in")),
        outputs=(_out_model(f"{stem}Out", spec) | None, Field(None, alias="out")),
        when=(DesignCondition | None, None),
    )


def _node_tag(value: Any) -> str:
    if isinstance(value, Mapping):
        return str(value.get("block") or value.get("type") or "")
    return str(getattr(value, "block", None) or getattr(value, "type", ""))


def _union(members: Sequence[tuple[str, type[BaseModel]]]) -> Any:
    """Node models discriminated on ``block`` (``type`` for loops and subflows)."""
    if len(members) == 1:
        return members[0][1]
    tagged = tuple(Annotated[model, Tag(tag)] for tag, model in members)
    return Annotated[_or(tagged), Discriminator(_node_tag)]


def _list_of(item: Any) -> Any:
    """``list[item]`` for a type built at run time."""
    return list[item]


def _or(types: Sequence[Any]) -> Any:
    result = types[0]
    for item in types[1:]:
        result = result | item
    return result


def build_design_model(specs: Sequence[BlockSpec]) -> type[BaseModel]:
    """``LLMDesignModel`` for exactly these blocks (at least one)."""
    if not specs:
        raise ValueError("build_design_model needs at least one block")
    block_members = [(spec.id, block_node_model(spec)) for spec in specs]
    body_node = _union(block_members)
    body_plan = _model(
        "DesignBodyPlan",
        __config__=ConfigDict(extra="forbid"),
        graph=(_list_of(body_node), Field(min_length=1)),
        exports=(list[DesignExport], Field(default_factory=list)),
    )
    body = _model("DesignBody", __config__=ConfigDict(extra="forbid"), plan=(body_plan, ...))
    loop = _model(
        "DesignLoopNode",
        __config__=ConfigDict(extra="forbid", populate_by_name=True),
        __doc__="A loop: exactly one of foreach / while; the body runs per item.",
        __validators__={"_one_kind": model_validator(mode="after")(_one_loop_kind)},
        id=(str, Field(pattern=NODE_ID_PATTERN, max_length=100)),
        type=(Literal["loop"], ...),
        description=(str | None, None),
        foreach=(DesignForeach | None, None),
        while_=(DesignWhile | None, Field(None, alias="while")),
        body=(body, ...),
        out=(DesignLoopOut | None, None),
        when=(DesignCondition | None, None),
    )
    subflow = _model(
        "DesignSubflowNode",
        __config__=ConfigDict(extra="forbid"),
        __doc__="Calls another registered Plan (designs/<plan_id>.yaml).",
        id=(str, Field(pattern=NODE_ID_PATTERN, max_length=100)),
        type=(Literal["subflow"], ...),
        description=(str | None, None),
        call=(DesignCall, ...),
        out=(DesignSubflowOut | None, None),
        when=(DesignCondition | None, None),
    )
    node = _union([*block_members, ("loop", loop), ("subflow", subflow)])
    return _model(
        "LLMDesignModel",
        __config__=ConfigDict(extra="forbid"),
        __doc__="A business procedure as a Plan graph (blocks, loops, subflows) and its vars.",
        id=(str, Field(description="plan id in snake_case")),
        description=(str | None, None),
        vars=(dict[str, Any], Field(default_factory=dict)),
        policy=(DesignPolicy | None, None),
        ui=(DesignUI | None, None),
        graph=(_list_of(node), Field(min_length=1)),
        questions=(list[DesignQuestion], Field(default_factory=list)),
    )


def _one_loop_kind(model: BaseModel) -> BaseModel:
    if (getattr(model, "foreach", None) is None) == (getattr(model, "while_", None) is None):
        raise ValueError("a loop needs exactly one of 'foreach' or 'while'")
    return model


def build_skeleton_model(block_ids: Sequence[str]) -> type[BaseModel]:
    """Stage 1's ``DesignSkeleton``: the flow as steps over exactly these blocks."""
    if not block_ids:
        raise ValueError("build_skeleton_model needs at least one block")
    step = _model(
        "SkeletonStep",
        __config__=ConfigDict(extra="forbid"),
        block=(Literal[tuple(block_ids)], ...),
        purpose=(str, Field(min_length=1, description="what this step does, in Japanese")),
        loop=(Literal["none", "foreach", "while"], "none"),
        subflow=(bool, False),
        ui=(bool, Field(False, description="the step asks the user (upload, input, approval)")),
    )
    return _model(
        "DesignSkeleton",
        __config__=ConfigDict(extra="forbid"),
        __doc__="The flow of the procedure: input -> transformation -> output steps.",
        steps=(_list_of(step), Field(min_length=1)),
        notes=(str | None, None),
        questions=(list[DesignQuestion], Field(default_factory=list)),
    )


# --------------------------------------------------------------------------- to the DSL


def _as_mapping(design: BaseModel | Mapping[str, Any]) -> dict[str, Any]:
    if isinstance(design, BaseModel):
        return design.model_dump(mode="json", by_alias=True, exclude_none=True)
    return dict(design)


def _node_dict(node: Mapping[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = {"id": node.get("id")}
    if node.get("description"):
        result["description"] = node["description"]
    if node.get("type") == "loop" or "foreach" in node or "while" in node:
        result["type"] = "loop"
        foreach = node.get("foreach")
        if isinstance(foreach, Mapping):
            result["foreach"] = {
                "input": foreach.get("items"),
                "itemVar": foreach.get("var") or "item",
            }
        elif node.get("while") is not None:
            result["while"] = node["while"]
        body = node.get("body") or {}
        plan = body.get("plan") if isinstance(body, Mapping) else None
        plan = plan if isinstance(plan, Mapping) else {}
        graph = [_node_dict(item) for item in plan.get("graph") or [] if isinstance(item, Mapping)]
        body_plan: dict[str, Any] = {"graph": graph}
        if plan.get("exports"):
            body_plan["exports"] = list(plan["exports"])
        result["body"] = {"plan": body_plan}
        out = node.get("out")
        if isinstance(out, Mapping) and out.get("collect"):
            result["out"] = {"collect": out["collect"]}
    elif node.get("type") == "subflow" or "call" in node:
        result["type"] = "subflow"
        result["call"] = node.get("call")
        if node.get("out"):
            result["out"] = node["out"]
    else:
        result["block"] = node.get("block")
        result["in"] = dict(node.get("in") or {})
        if node.get("out"):
            result["out"] = dict(node["out"])
    if node.get("when"):
        result["when"] = node["when"]
    return result


def _var_references(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield from VAR_REFERENCE.findall(value)
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _var_references(item)
    elif isinstance(value, list):
        for item in value:
            yield from _var_references(item)


def plan_id_of(text: Any) -> str:
    """A Plan id from what the model wrote (letters, digits, _ and - only)."""
    cleaned = PLAN_ID_CHARS.sub("_", str(text or "")).strip("_-")[:200]
    return cleaned if cleaned and cleaned[0].isalpha() else DEFAULT_PLAN_ID


def to_plan_dict(design: BaseModel | Mapping[str, Any]) -> dict[str, Any]:
    """The Plan (a YAML-ready mapping) for a design: the mapping the module doc lists."""
    data = _as_mapping(design)
    graph = [_node_dict(node) for node in data.get("graph") or [] if isinstance(node, Mapping)]
    policy = dict(GENERATED_POLICY)
    given = data.get("policy")
    if isinstance(given, Mapping):
        policy.update({key: given[key] for key in ("retries", "timeout_ms") if key in given})
        policy["on_error"] = ON_ERROR_OF.get(str(given.get("on_error", "halt")), "halt")
    variables = dict(data.get("vars") or {})
    questions = [q for q in data.get("questions") or [] if isinstance(q, Mapping)]
    for name in [*_var_references(graph), *(str(q.get("var")) for q in questions if q.get("var"))]:
        variables.setdefault(name, None)
    plan: dict[str, Any] = {
        "apiVersion": API_VERSION,
        "id": plan_id_of(data.get("id")),
        "version": GENERATED_VERSION,
    }
    if data.get("description"):
        plan["description"] = data["description"]
    plan["vars"] = variables
    plan["policy"] = policy
    ui = data.get("ui")
    if isinstance(ui, Mapping) and ui.get("layout"):
        plan["ui"] = {"layout": list(ui["layout"])}
    plan["graph"] = graph
    return plan


def questions_of(design: BaseModel | Mapping[str, Any]) -> list[dict[str, Any]]:
    """The model's questions as plain dicts ``{var, question, type, options}``."""
    result = []
    for item in _as_mapping(design).get("questions") or []:
        if not isinstance(item, Mapping) or not item.get("var") or not item.get("question"):
            continue
        kind = item.get("type") if item.get("type") in QUESTION_TYPES else "text"
        options = [str(option) for option in item.get("options") or []]
        result.append(
            {
                "var": str(item["var"]),
                "question": str(item["question"]),
                "type": kind,
                "options": options,
            }
        )
    return result
