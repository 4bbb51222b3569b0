"""What the validator's parts share while checking one plan: ``CheckContext``.

``NodeInfo`` is what the validator knows about one node; ``ValidationRun`` the state
of one ``validate`` call (shared with the subflows it visits); ``CheckContext`` one
plan's issues, nodes and graphs, with ``add`` (collect an issue) and ``schema`` (a
port's resolved schema). The parts (``refs``, ``loops``, ``subflows``, ``rules``)
import this module, never ``plans.check.validator``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from keiri_agent.plans.catalog.catalog import BlockCatalog, BlockSpec, CatalogError
from keiri_agent.plans.catalog.port_types import PortSchemas
from keiri_agent.plans.dsl.models import Condition, Export, Node, Plan
from keiri_agent.plans.dsl.references import Reference
from keiri_agent.plans.issues import (
    IssueCode,
    Severity,
    ValidationIssue,
    ValidationReport,
    make_issue,
)
from keiri_agent.plans.store import PlanStore

Schema = Mapping[str, Any] | None
"""A value's JSON Schema when the validator can know it, else None."""
Locals = Mapping[str, Schema]
"""The variables visible at a place of the plan (loop variables, while exports)."""


@dataclass
class NodeInfo:
    """What the validator knows about one node (at any depth)."""

    node: Node
    path: str
    chain: tuple[str, ...]
    """Ids of the enclosing loops, then the node's own id."""
    spec: BlockSpec | None = None
    aliases: dict[str, str] | None = None
    """alias -> output port / export name; None when unknown (every alias accepted)."""
    explicit: bool = False
    called: Plan | None = None
    sink: bool | None = None


@dataclass
class ValidationRun:
    """State of one ``validate`` call, shared with the subflows it visits."""

    env: Mapping[str, str]
    env_allow: frozenset[str] | None = None
    """Names ``${env.*}`` may read (``KEIRI_AGENT_PLAN_ENV_ALLOW``); None: any name."""
    config: Mapping[str, Any] | None = None
    """What ``${config.*}`` will read (``<home>/config.yaml``); None: not checked."""
    vars: Mapping[str, Any] = field(default_factory=dict)
    """The values the caller gives the checked plan's vars (``plan run --var``), over
    its declared ones; not the vars of the plans its subflows call."""
    subflow_reports: dict[str, ValidationReport] = field(default_factory=dict)
    reported_refs: set[tuple[str, str, str, str]] = field(default_factory=set)
    checked_specs: set[tuple[str, str]] = field(default_factory=set)


class Validating(Protocol):
    """What the parts use of ``PlanValidator``."""

    catalog: BlockCatalog
    store: PlanStore | None
    ports: PortSchemas
    llm_configured: bool | None

    def validate_called(
        self, plan: Plan, stack: tuple[str, ...], run: ValidationRun
    ) -> ValidationReport: ...

    def port_schema(
        self, spec: BlockSpec, section: str, port: str
    ) -> dict[str, Any] | CatalogError: ...

    def spec_for(self, reference: str) -> tuple[BlockSpec | None, str | None]: ...

    def known_block_ids(self) -> list[str]: ...


class CheckContext:
    """One plan being checked: its issues, nodes (``infos``) and graphs (by loop chain)."""

    def __init__(
        self, validator: Validating, plan: Plan, stack: tuple[str, ...], run: ValidationRun
    ) -> None:
        self.validator = validator
        self.plan = plan
        self.stack = stack
        self.run_state = run
        self.issues: list[ValidationIssue] = []
        self.infos: dict[str, NodeInfo] = {}
        self.graphs: dict[tuple[str, ...], list[str]] = {}

    def add(
        self,
        code: IssueCode,
        message: str,
        *,
        node_id: str | None = None,
        path: str | None = None,
        hint: str | None = None,
        severity: Severity = "error",
        name: str | None = None,
        choices: Iterable[str] | None = None,
        closest: str | None = None,
        expected: str | None = None,
        actual: str | None = None,
        input: str | None = None,
        var: str | None = None,
        cause: ValidationIssue | None = None,
    ) -> None:
        """Collect one issue (``details`` from the keywords)."""
        self.issues.append(
            make_issue(
                code,
                message,
                severity=severity,
                hint=hint,
                node=node_id,
                path=path,
                name=name,
                choices=choices,
                closest=closest,
                expected=expected,
                actual=actual,
                input=input,
                var=var,
                cause=cause,
            )
        )

    def schema(
        self, spec: BlockSpec, section: str, port: str, node_id: str, path: str
    ) -> dict[str, Any] | None:
        """A port's resolved schema; REF_UNRESOLVED (once per port) when it cannot resolve."""
        if port not in (spec.inputs if section == "inputs" else spec.outputs):
            return None
        found = self.validator.port_schema(spec, section, port)
        if isinstance(found, CatalogError):
            key = (spec.id, spec.version, section, port)
            if key not in self.run_state.reported_refs:
                self.run_state.reported_refs.add(key)
                self.add(
                    IssueCode.REF_UNRESOLVED,
                    f"{spec.reference} の{'入力' if section == 'inputs' else '出力'} "
                    f"{port!r}: {found.message}",
                    node_id=node_id,
                    path=f"{path}.{'in' if section == 'inputs' else 'out'}.{port}",
                    hint=found.hint
                    or (
                        "ブロックの定義 (spec) の $ref を直してください"
                        "（ブロックの管理者に伝えてください）"
                    ),
                )
            return None
        return found


class ReferenceWalker(Protocol):
    """What the loop rules use of the reference checker (``plans.check.refs``)."""

    check: CheckContext

    @property
    def infos(self) -> Mapping[str, NodeInfo]: ...

    def field(
        self, chain: tuple[str, ...], node_id: str, path: str, value: Any, scope: Locals
    ) -> tuple[list[Reference], list[Schema]] | None: ...

    def check_graph(self, graph: Sequence[Node], loops: tuple[str, ...], scope: Locals) -> None: ...

    def condition(
        self, chain: tuple[str, ...], node_id: str, path: str, condition: Condition, scope: Locals
    ) -> None: ...

    def export_schema(self, export: Export) -> Schema: ...

    def use(
        self, info: NodeInfo, ref: Reference, node_id: str | None, path: str, code: IssueCode
    ) -> Schema: ...
