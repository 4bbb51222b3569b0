"""Plan generation with an LLM (seed 003 §5, §6): two stages, an immediate check, self-repair.

``LLMDesigner.design`` runs:

0. stage 0 (requirements): the instruction's requirement model (``procedure.Procedure``:
   inputs, steps with the parameters the instruction or documents give, outputs, and the
   parts that cannot be built). Gaps end the design there, with no Plan; otherwise the
   checklist joins the context of every later stage;
1. stage 1 (skeleton): the flow as steps over the candidate blocks (``DesignSkeleton``);
2. stage 2 (wiring): ``LLMDesignModel`` limited to the skeleton's blocks, ``in``/``out``
   keys whitelisted (``design_model``);
3. ``to_plan_dict`` → YAML → ``engine.check`` (loader + validator), then the dry run
   when the check finds no error, then the coverage check against the requirements
   (``coverage.check_coverage``): a requirement not covered and a node no requirement
   needs are errors too (``REQUIREMENT_NOT_COVERED``, ``UNRELATED_NODE``);
4. while errors remain, at most ``options.max_attempts`` repair rounds: the errors per
   node, the spec excerpts of the blocks at fault, the template contracts and the
   per-node diff go back to the model (``prompts.repair_prompt``).

Every call asks for structured output with ``function_calling``. When the reply does
not parse, ONE free-form call asks for the JSON as text, which is extracted (fenced
or bare) and validated. A stage-2 or repair answer that is Plan-shaped but breaks
the whitelist (an unknown block or input) is still checked, so the checker's issue
codes drive the repair; anything else is an ``LLMError``.

Progress is reported as ``Event(source="design")``: ``stage`` (skeleton, wiring),
``attempt`` (a repair round starts) and ``check`` (the error codes of an attempt).
"""

from __future__ import annotations

import json
import re
import time
import uuid
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import yaml
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, ValidationError

from keiri_agent.errors import LLMError, UserInputError
from keiri_agent.events import EventCallback, EventEmitter
from keiri_agent.llm.structured import describe_validation_error, invoke_structured, model_errors
from keiri_agent.plans.catalog.catalog import BlockSpec, CatalogError
from keiri_agent.plans.design import prompts
from keiri_agent.plans.design.coverage import CoverageReport, check_coverage
from keiri_agent.plans.design.design_model import (
    build_design_model,
    build_skeleton_model,
    questions_of,
    to_plan_dict,
)
from keiri_agent.plans.design.models import (
    BlockCandidate,
    DesignAttempt,
    DesignEngineOptions,
    DocumentDigest,
    GeneratedPlan,
    TemplateSpec,
)
from keiri_agent.plans.design.procedure import Procedure, checklist
from keiri_agent.plans.design.repair import (
    blocks_at_fault,
    collect_errors,
    diff_nodes,
    error_codes,
    errors_by_node,
    spec_excerpt,
    template_contract,
)
from keiri_agent.plans.dsl.loader import check_plan_text
from keiri_agent.plans.engine import PlanEngine
from keiri_agent.plans.issues import IssueCode

LLMApplyMode = Literal["hint", "llm-only"]
REQUIREMENT_NOT_COVERED = "REQUIREMENT_NOT_COVERED"
UNRELATED_NODE = "UNRELATED_NODE"
"""Coverage problems sent to the repair round like check errors (not Plan issue codes)."""
FENCED_JSON = re.compile(r"```(?:json|JSON)?\s*\n(.*?)```", re.DOTALL)
SUGGEST_CHAT = "解決できなかった項目は、設計チャットで不足項目に答えると Plan に反映されます。"
SUGGEST_TEMPLATE = (
    "この手順に近いテンプレートを選ぶ（または designs/templates/ に追加する）と、生成が安定します。"
)


def extract_json(text: str) -> Any | None:
    """The first JSON object in ``text``: inside a ```json fence, else bare; None if none."""
    for block in FENCED_JSON.findall(text):
        try:
            return json.loads(block)
        except json.JSONDecodeError:
            continue
    decoder = json.JSONDecoder()
    for match in re.finditer(r"\{", text):
        try:
            value, _end = decoder.raw_decode(text, match.start())
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            return value
    return None


def bounded_model(model: BaseChatModel, max_tokens: int) -> BaseChatModel:
    """``model`` with its output token limit set (models without such a field as they are)."""
    for name in ("max_tokens", "max_completion_tokens"):
        if name in type(model).model_fields:
            return model.model_copy(update={name: max_tokens})
    return model


def template_blocks(template: TemplateSpec) -> list[str]:
    """The block ids a template's snippet uses (loop bodies included), in order."""
    found: list[str] = []

    def walk(nodes: Sequence[Any]) -> None:
        for node in nodes:
            if not isinstance(node, Mapping):
                continue
            if node.get("block"):
                found.append(str(node["block"]).partition("@")[0])
            body = node.get("body")
            plan = body.get("plan") if isinstance(body, Mapping) else None
            if isinstance(plan, Mapping):
                walk(plan.get("graph") or [])

    walk(template.graph_snippet)
    return list(dict.fromkeys(found))


def _plan_shaped(data: Any) -> bool:
    graph = data.get("graph") if isinstance(data, dict) else None
    return isinstance(graph, list) and bool(graph) and all(isinstance(n, dict) for n in graph)


def _dump(value: BaseModel) -> dict[str, Any]:
    return value.model_dump(mode="json", by_alias=True, exclude_unset=True)


class LLMDesigner:
    """Generates a Plan with a chat model (see the module doc)."""

    def __init__(
        self,
        model: BaseChatModel,
        engine: PlanEngine,
        options: DesignEngineOptions,
        *,
        on_event: EventCallback | None = None,
    ) -> None:
        self.model = bounded_model(model, options.max_output_tokens)
        self.engine = engine
        self.options = options
        self.on_event = on_event

    def design(
        self,
        instruction: str,
        digest: DocumentDigest,
        candidates: Sequence[BlockCandidate],
        templates: Sequence[TemplateSpec] = (),
        apply_mode: LLMApplyMode = "hint",
    ) -> GeneratedPlan:
        """A checked Plan for ``instruction`` (errors left after repair are on the result).

        Raises:
            UserInputError: No candidate block is in the catalog, or ``apply_mode`` is
                not ``hint``/``llm-only``.
            LLMError: The model service failed, or an answer could not be read even
                as free-form JSON.
        """
        if apply_mode not in ("hint", "llm-only"):
            raise UserInputError(
                f"LLM による生成の適用モード {apply_mode!r} は使えません",
                hint="hint か llm-only を指定してください（compose は LLM を使いません）",
            )
        events = EventEmitter("design", f"design_{uuid.uuid4().hex[:12]}", self.on_event)
        used = list(templates) if apply_mode == "hint" else []
        wanted = [c.block_id for c in candidates] + [b for t in used for b in template_blocks(t)]
        specs = self._specs(wanted)
        if not specs:
            raise UserInputError(
                "Plan の候補になるブロックが見つかりませんでした",
                hint="指示に業務の内容（読み込むファイル、照合・集計・出力など）を具体的に書くか、"
                "ブロックをピン留めしてください",
            )
        system = SystemMessage(content=prompts.system_prompt(self.options))
        memo: list[str] = []

        events.emit("stage", {"stage": "requirements"})
        answer, via = self._ask(
            Procedure,
            [system, HumanMessage(content=prompts.requirements_prompt(instruction, digest.text))],
            lenient=False,
        )
        procedure = Procedure.model_validate(answer)
        memo.append(f"requirements: {via}")
        if procedure.gaps:
            return GeneratedPlan(
                plan=None,
                yaml_text="",
                reasoning="structured: " + "; ".join(memo) + "; gaps",
                apply_mode=apply_mode,
                candidates=list(candidates),
                warnings=list(digest.warnings),
                procedure=procedure,
                gaps=list(procedure.gaps),
            )
        context = prompts.with_requirements(
            prompts.context_prompt(instruction, digest.text, specs, used), checklist(procedure)
        )

        events.emit("stage", {"stage": "skeleton", "blocks": [s.id for s in specs]})
        skeleton_schema = build_skeleton_model([spec.id for spec in specs])
        skeleton, via = self._ask(
            skeleton_schema,
            [system, HumanMessage(content=prompts.skeleton_prompt(context))],
            lenient=False,
        )
        memo.append(f"skeleton: {via}")
        chosen = list(dict.fromkeys(str(step["block"]) for step in skeleton.get("steps", [])))
        by_id = {spec.id: spec for spec in specs}
        skeleton_specs = [by_id[block] for block in chosen if block in by_id] or specs

        events.emit("stage", {"stage": "wiring", "blocks": [s.id for s in skeleton_specs]})
        design, via = self._ask(
            build_design_model(skeleton_specs),
            [system, HumanMessage(content=prompts.wiring_prompt(context, skeleton))],
            lenient=True,
        )
        memo.append(f"wiring: {via}")

        repair_schema = build_design_model(specs)
        attempts: list[DesignAttempt] = []
        previous_graph: list[dict[str, Any]] | None = None
        questions = questions_of(skeleton)
        while True:
            number = len(attempts) + 1
            plan_dict = to_plan_dict(design)
            questions = _merge_questions(questions, questions_of(design))
            yaml_text = yaml.safe_dump(plan_dict, allow_unicode=True, sort_keys=False)
            checked = check_plan_text(yaml_text)
            report = self.engine.check(yaml_text)
            dry_run, dry_run_seconds = None, None
            if checked.plan is not None and report.ok:
                started = time.perf_counter()
                dry_run = self.engine.dry_run(checked.plan)
                dry_run_seconds = time.perf_counter() - started
            coverage = check_coverage(procedure, plan_dict)
            errors = collect_errors(report, dry_run) + coverage_errors(coverage)
            graph = plan_dict["graph"]
            changes = diff_nodes(previous_graph, graph) if previous_graph is not None else []
            attempt = DesignAttempt(number, yaml_text, error_codes(errors), errors, changes)
            attempts.append(attempt)
            events.emit(
                "check",
                {
                    "attempt": number,
                    "ok": not errors,
                    "error_codes": attempt.error_codes,
                    "changed_nodes": [change.node_id for change in changes],
                },
            )
            if not errors or number > self.options.max_attempts:
                break
            events.emit("attempt", {"attempt": number + 1, "errors": len(errors)})
            request = prompts.repair_prompt(
                context,
                attempt=number,
                groups=errors_by_node(errors),
                specs=self._excerpts(errors, graph, by_id),
                contracts=[template_contract(template) for template in used],
                changes=changes if previous_graph is not None else diff_nodes([], graph),
                previous_yaml=yaml_text,
            )
            design, via = self._ask(
                repair_schema, [system, HumanMessage(content=request)], lenient=True
            )
            memo.append(f"repair {number + 1}: {via}")
            previous_graph = graph

        warnings = list(digest.warnings)
        if errors:
            warnings += [SUGGEST_CHAT, SUGGEST_TEMPLATE]
        return GeneratedPlan(
            plan=checked.plan,
            yaml_text=yaml_text,
            reasoning="structured: " + "; ".join(memo),
            apply_mode=apply_mode,
            report=report,
            dry_run=dry_run,
            attempts=attempts,
            candidates=list(candidates),
            templates=[template.id for template in used],
            warnings=warnings,
            questions=questions,
            dry_run_seconds=dry_run_seconds,
            procedure=procedure,
            coverage=coverage,
        )

    def _specs(self, block_ids: Sequence[str]) -> list[BlockSpec]:
        specs: list[BlockSpec] = []
        for block_id in dict.fromkeys(block_ids):
            try:
                specs.append(self.engine.catalog.resolve(block_id))
            except CatalogError:
                continue  # a template's block this catalog does not have: not offered
        return specs

    def _excerpts(
        self,
        errors: Sequence[Mapping[str, Any]],
        graph: Sequence[Mapping[str, Any]],
        by_id: Mapping[str, BlockSpec],
    ) -> list[str]:
        """Spec excerpts of the blocks at fault; for an unknown block, of its closest
        candidate."""
        wanted = blocks_at_fault(errors, graph)
        for error in errors:
            details = error.get("details") or {}
            if error.get("code") == IssueCode.UNKNOWN_BLOCK and details.get("closest"):
                wanted.append(str(details["closest"]))
        return [spec_excerpt(by_id[block]) for block in dict.fromkeys(wanted) if block in by_id]

    def _ask(
        self, schema: type[BaseModel], messages: list[BaseMessage], *, lenient: bool
    ) -> tuple[dict[str, Any], str]:
        """The answer as a dict and how it came (``structured``, ``free-form``,
        ``free-form unchecked``: Plan-shaped but outside the whitelist, left to the check)."""
        try:
            return _dump(invoke_structured(self.model, schema, messages, reasks=0)), "structured"
        except LLMError as error:
            problem = (error.details or {}).get("validation_error")
            if problem is None:
                raise
        request = HumanMessage(content=prompts.free_form_prompt(schema.__name__, str(problem)))
        with model_errors(self.model):
            reply = self.model.invoke([*messages, request])
        text = reply.content if isinstance(reply.content, str) else str(reply.content)
        data = extract_json(text)
        if data is None:
            raise LLMError(
                "LLM の回答から Plan の JSON を読み取れませんでした",
                hint="指示を短く具体的にするか、より高性能なモデルを設定して再実行してください",
                details={"schema": schema.__name__, "validation_error": str(problem)},
            )
        try:
            return _dump(schema.model_validate(data)), "free-form"
        except ValidationError as invalid:
            if lenient and _plan_shaped(data):
                return dict(data), "free-form unchecked"
            raise LLMError(
                "LLM の回答が Plan の形式に合いませんでした",
                hint="指示を短く具体的にするか、より高性能なモデルを設定して再実行してください",
                details={
                    "schema": schema.__name__,
                    "validation_error": describe_validation_error(invalid),
                },
            ) from None


def coverage_errors(coverage: CoverageReport) -> list[dict[str, Any]]:
    """A requirement not covered and a node no requirement needs, as repair errors."""
    errors: list[dict[str, Any]] = [
        {
            "code": REQUIREMENT_NOT_COVERED,
            "severity": "error",
            "message": f"要件「{item.text}」を満たしていません: {item.problem}",
            "node_id": item.node,
            "hint": "要件の列・条件・キーをそのまま使うノードを、"
            "入力から出力への流れの中に置いてください",
            "details": {"requirement": item.requirement},
        }
        for item in coverage.missing
    ]
    errors += [
        {
            "code": UNRELATED_NODE,
            "severity": "error",
            "message": "指示の要件に関係しない処理です",
            "node_id": node,
            "hint": "要件に無いノードは削除してください",
            "details": {},
        }
        for node in coverage.unrelated
    ]
    return errors


def _merge_questions(
    first: Sequence[dict[str, Any]], second: Sequence[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Questions by var, the later answer's wording winning, first-seen order."""
    merged: dict[str, dict[str, Any]] = {}
    for question in [*first, *second]:
        merged[question["var"]] = question
    return list(merged.values())
