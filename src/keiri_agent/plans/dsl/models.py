"""The Plan DSL (seed 002 §5) as Pydantic models.

A Plan is YAML::

    apiVersion: v1
    id: invoice_reconciliation
    version: 0.2.0
    vars: {instruction: "..."}
    policy: {on_error: halt, retries: 0, timeout_ms: 300000,
             concurrency: {default_max_workers: 4, per_node: {process_each_file: 8}}}
    ui: {layout: [collect_inputs, ...]}
    graph:
      - id: collect_inputs            # a block node (no ``type``, or ``type: block``)
        block: ui.interactive_input   # a block id, optionally with a version range: id@^1.2
        in: {mode: collect, ...}      # literals and ${...} references
        out: {collected_data: collected}   # block output name -> alias used in references
        when: {expr: "${vars.enabled} == true"}
      - id: each_file                 # type: loop, with foreach or while
        type: loop
        foreach: {input: "${parse.evidence.files}", itemVar: file, indexVar: idx,
                  max_concurrency: 4}
        body: {plan: {graph: [...], exports: [{from: analyze.result, as: result}]}}
        out: {collect: result}        # the list of every iteration's ``result``
      - id: validate                  # type: subflow
        type: subflow
        call: {plan_id: common/validation_flow, inputs: {data: "${collect.collected}"}}
        out: {exports: [{from: validation_passed, as: is_valid}]}

References (``${node.alias}``, ``${vars.x}``, ``${env.X}``, ``${config.a.b}``, loop
item/index variables, attribute paths and ``.length``) are parsed by
``plans.dsl.references``; conditions by ``plans.dsl.conditions``. A block node with no
``out`` exposes every output under its own name.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    field_validator,
    model_validator,
)

API_VERSIONS = ("v1",)
NODE_ID = re.compile(r"^[A-Za-z_][A-Za-z0-9_\-]*$")
SEMVER = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$"
)
COMPARISON_OPS = ("eq", "ne", "gt", "gte", "lt", "lte")
RESERVED_ROOTS = frozenset({"vars", "env", "config"})
"""Reference roots that are not node ids."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=True)


class ConditionExpr(_Model):
    """``when: {expr: "${a.b} > 0 and not ${vars.skip}"}`` (see ``plans.dsl.conditions``)."""

    expr: str = Field(min_length=1, max_length=2000)


class ConditionCompare(_Model):
    """``when: {left: "${value}", op: gt, right: 10}``."""

    left: Any
    op: Literal["eq", "ne", "gt", "gte", "lt", "lte"]
    right: Any


Condition = ConditionExpr | ConditionCompare


class Export(_Model):
    """``{from: node.alias, as: name}``: a value a body plan or subflow hands back."""

    source: str = Field(alias="from", min_length=1)
    name: str = Field(alias="as", min_length=1)
    title: str | None = Field(
        default=None,
        min_length=1,
        max_length=200,
        description="what people see, e.g. 精算チェック結果",
    )
    description: str | None = Field(default=None, max_length=2000)


class _NodeBase(_Model):
    id: str = Field(min_length=1, max_length=100)
    title: str | None = Field(
        default=None, min_length=1, max_length=200, description="what people see instead of the id"
    )
    description: str | None = None
    when: Condition | None = None

    @field_validator("id")
    @classmethod
    def _valid_id(cls, value: str) -> str:
        if not NODE_ID.match(value):
            raise ValueError(
                f"ノード id {value!r} は英字か _ で始め、英数字・_・- だけで書いてください"
            )
        if value in RESERVED_ROOTS:
            raise ValueError(f"ノード id {value!r} は参照で使う予約された名前なので使えません")
        return value


class BlockNode(_NodeBase):
    """Runs one block from the catalog."""

    type: Literal["block"] = "block"
    block: str = Field(min_length=1, description="block id, optionally id@<version range>")
    inputs: dict[str, Any] = Field(default_factory=dict, alias="in")
    outputs: dict[str, str] = Field(
        default_factory=dict, alias="out", description="block output name -> alias"
    )


class Foreach(_Model):
    """Iterate over a list; bodies run concurrently up to ``max_concurrency``."""

    input: Any = Field(description="a reference to a list, or a literal list")
    item_var: str = Field(alias="itemVar", default="item")
    index_var: str | None = Field(alias="indexVar", default=None)
    max_concurrency: int = Field(default=1, ge=1, le=64)


class While(_Model):
    """Repeat while ``condition`` holds, at most ``max_iterations`` times (required)."""

    condition: Condition
    max_iterations: int = Field(ge=1, le=10_000)


class BodyPlan(_Model):
    """The sub-graph a loop runs per iteration, and what it exports."""

    graph: list[Node] = Field(min_length=1)
    exports: list[Export] = Field(default_factory=list)


class LoopBody(_Model):
    plan: BodyPlan


class LoopOut(_Model):
    """``collect``: the export gathered from every iteration into a list (input order)."""

    collect: str | None = None


class LoopNode(_NodeBase):
    """``type: loop`` with exactly one of ``foreach`` / ``while``."""

    type: Literal["loop"]
    foreach: Foreach | None = None
    while_: While | None = Field(default=None, alias="while")
    body: LoopBody
    out: LoopOut = Field(default_factory=LoopOut)

    @model_validator(mode="after")
    def _one_kind(self) -> LoopNode:
        if (self.foreach is None) == (self.while_ is None):
            raise ValueError("ループには 'foreach' か 'while' のどちらか一つだけを書いてください")
        return self


class SubflowCall(_Model):
    """Which plan to call (``designs/<plan_id>.yaml``) and the values of its vars."""

    plan_id: str = Field(min_length=1)
    inputs: dict[str, Any] = Field(default_factory=dict)


class SubflowOut(_Model):
    exports: list[Export] = Field(default_factory=list)


class SubflowNode(_NodeBase):
    """``type: subflow``: runs another Plan with its own variable scope."""

    type: Literal["subflow"]
    call: SubflowCall
    out: SubflowOut = Field(default_factory=SubflowOut)


def _node_kind(value: Any) -> str:
    if isinstance(value, dict):
        return str(value.get("type", "block"))
    return str(getattr(value, "type", "block"))


Node = Annotated[
    Annotated[BlockNode, Tag("block")]
    | Annotated[LoopNode, Tag("loop")]
    | Annotated[SubflowNode, Tag("subflow")],
    Discriminator(_node_kind),
]


class Concurrency(_Model):
    default_max_workers: int = Field(default=4, ge=1, le=64)
    per_node: dict[str, Annotated[int, Field(ge=1, le=64)]] = Field(default_factory=dict)


DEFAULT_TIMEOUT_MS = 1_800_000
"""A block attempt may run 30 minutes unless the plan says otherwise (``timeout_ms``);
``timeout_ms: null`` in a plan lifts the bound (a block that never returns then
holds its run forever)."""


class Policy(_Model):
    """Seed §8.3/§9.2: what happens on errors, retries, per-attempt timeout, parallelism."""

    on_error: Literal["halt", "continue", "retry"] = "halt"
    retries: int = Field(default=0, ge=0, le=10)
    timeout_ms: int | None = Field(default=DEFAULT_TIMEOUT_MS, ge=1)
    concurrency: Concurrency = Field(default_factory=Concurrency)


class VarInfo(_Model):
    """``ui.vars.<name>``: how a var is shown in the 実行 page's form, and whether its
    value is a secret."""

    title: str | None = Field(
        default=None,
        min_length=1,
        max_length=200,
        description="what people see instead of the name",
    )
    description: str | None = Field(default=None, max_length=2000)
    secret: bool = Field(
        default=False,
        description="the value is a secret (a password, an account number): masked as *** "
        "wherever it appears in logs, progress and results, and entered as a password",
    )


class UIConfig(BaseModel):
    """``ui.layout``: display order hint; ``ui.vars``: titles of the vars; other UI keys
    are kept for the surfaces."""

    model_config = ConfigDict(extra="allow", frozen=True)
    layout: list[str] = Field(default_factory=list)
    vars: dict[str, VarInfo] = Field(
        default_factory=dict, description="var name -> its title and description in forms"
    )


class Plan(_Model):
    """A business procedure: variables, policy, UI hints and a graph of nodes."""

    api_version: str = Field(alias="apiVersion")
    id: str = Field(min_length=1, max_length=200)
    version: str
    title: str | None = Field(
        default=None, min_length=1, max_length=200, description="what people see instead of the id"
    )
    description: str | None = None
    vars: dict[str, Any] = Field(default_factory=dict)
    policy: Policy = Field(default_factory=Policy)
    ui: UIConfig = Field(default_factory=UIConfig)
    graph: list[Node] = Field(min_length=1)
    exports: list[Export] = Field(
        default_factory=list, description="values a subflow caller can import"
    )

    @field_validator("version")
    @classmethod
    def _semver(cls, value: str) -> str:
        if not SEMVER.match(value):
            raise ValueError(
                f"version {value!r} は「メジャー.マイナー.パッチ」の形（例: 0.1.0）ではありません"
            )
        return value

    def is_secret_var(self, name: str) -> bool:
        """A var declared ``ui.vars.<name>.secret`` or named like a secret (``password``,
        ``api_key``, ``口座番号`` …: ``masking.is_secret_key``)."""
        from keiri_agent.masking import is_secret_key

        info = self.ui.vars.get(name)
        return (info is not None and info.secret) or is_secret_key(name)


BodyPlan.model_rebuild()
LoopBody.model_rebuild()
LoopNode.model_rebuild()
