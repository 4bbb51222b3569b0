"""``generate_plan`` (seed 003 §5): the one entry point of Plan generation.

It chooses how a Plan is made and hands back a ``GeneratedPlan`` that is already
checked (loader + validator) and dry-run, with the requirements the Design chat asks:

========================  =====================================================
situation                 what happens (``GeneratedPlan.reasoning`` starts with)
========================  =====================================================
``apply_mode="compose"``  the selected templates are composed mechanically, no LLM
                          (``compose``)
no chat model (offline)   the selected templates are composed, or else the
                          templates the instruction finds (``offline-compose``);
                          an instruction no template covers gets no Plan, a clear
                          message and the candidate blocks — never an invented Plan
a chat model              ``LLMDesigner``: two stages, check, self-repair
                          (``structured``); ``hint`` shows the selected templates
                          to the model, ``llm-only`` does not
the LLM fails             the error is raised as it is, unless ``options.fallback``
                          (``KEIRI_AGENT_LLM_FALLBACK``): then the safe fallback
                          Plan (``fallback``), the error named in the warnings
========================  =====================================================

Candidates come from the ``BlockRetriever`` (Top-K per category, pinned blocks
always) unless the caller passes them.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import yaml

from keiri_agent.errors import LLMError, UserInputError
from keiri_agent.plans.design.compose import compose_templates
from keiri_agent.plans.design.coverage import check_coverage
from keiri_agent.plans.design.documents import digest_documents
from keiri_agent.plans.design.fallback import build_fallback_plan
from keiri_agent.plans.design.models import (
    APPLY_MODES,
    BlockCandidate,
    ComposeResult,
    DesignDocument,
    DesignEngineOptions,
    DocumentDigest,
    GeneratedPlan,
    TemplateSpec,
)
from keiri_agent.plans.design.procedure import Gap, Procedure
from keiri_agent.plans.design.procedure_plan import plan_from_procedure
from keiri_agent.plans.design.procedure_rules import read_procedure
from keiri_agent.plans.design.requirements import build_requirements
from keiri_agent.plans.design.retrieval import BlockRetriever
from keiri_agent.plans.design.templates import TemplateLibrary
from keiri_agent.plans.dsl.loader import check_plan_text

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

    from keiri_agent.events import EventCallback
    from keiri_agent.plans.catalog import BlockCatalog
    from keiri_agent.plans.engine import PlanEngine

MAX_INSTRUCTION_CHARS = 4_000
DEFAULT_PLAN_ID = "generated_plan"
TEMPLATES_NOTE = (
    "LLM が設定されていないため、選んだテンプレートを機械的に組み合わせました（オフライン）。"
)
OFFLINE_NOTE = (
    "LLM が設定されていないため、指示の言葉から規則で読み取った手順を"
    " 1 ステップ 1 ブロックで組み立てました（オフライン）。"
)


def generate_plan(
    instruction: str,
    documents_text: DocumentDigest | Sequence[str] | None,
    registry: BlockCatalog,
    options: DesignEngineOptions | None = None,
    selected_templates: Sequence[str] | None = None,
    apply_mode: str = "hint",
    *,
    engine: PlanEngine,
    model: BaseChatModel | None = None,
    library: TemplateLibrary | None = None,
    retriever: BlockRetriever | None = None,
    candidates: Sequence[BlockCandidate] | None = None,
    plan_id: str | None = None,
    on_event: EventCallback | None = None,
    columns: Sequence[str] = (),
) -> GeneratedPlan:
    """A checked Plan for ``instruction`` (see the module doc for the paths).

    ``documents_text`` is a ``DocumentDigest`` (from ``documents.digest_documents``) or
    plain texts; ``model`` None means the offline provider; ``columns`` are the columns of
    sample files the user gave (a column question offers them; the model is told them).

    Raises:
        UserInputError: An empty or oversized instruction, an unknown apply mode or
            template id, ``compose`` without templates.
        LLMError: The model failed and ``options.fallback`` is off.
    """
    options = options or DesignEngineOptions()
    instruction = _checked_instruction(instruction)
    if apply_mode not in APPLY_MODES:
        raise UserInputError(
            f"適用モード {apply_mode!r} は使えません",
            hint="hint（テンプレートを参考に LLM が生成）、compose（テンプレートを機械的に合成）、"
            "llm-only（テンプレートを使わない）のいずれかを指定してください",
            code="DESIGN_APPLY_MODE",
        )
    digest = _digest(documents_text, options)
    library = library if library is not None else TemplateLibrary.load()
    templates = [library.get(template_id) for template_id in selected_templates or ()]
    if candidates is None:
        retriever = retriever or BlockRetriever(registry)
        candidates = retriever.search(
            instruction if not digest.provided else f"{instruction}\n{digest.text[:1_000]}",
            per_category=options.topk_per_category,
            total=options.topk_total,
            pinned=options.pinned_blocks,
        )
    candidates = list(candidates)

    if apply_mode == "compose":
        if not templates:
            raise UserInputError(
                "compose にはテンプレートを 1 つ以上選んでください",
                hint="テンプレートを選ぶか、適用モードを hint / llm-only にしてください",
                code="DESIGN_NO_TEMPLATES",
            )
        result = _composed(templates, registry, engine, plan_id, "compose", digest, candidates)
    elif model is None:
        chosen = templates if apply_mode != "llm-only" else []
        result = _offline(
            instruction, chosen, library, registry, engine, plan_id, digest, columns
        )  # fmt: skip
        result.candidates = candidates
    else:
        told = instruction
        if columns:
            told = f"{instruction}\n\n見本のファイルの列: {'、'.join(columns)}"
        result = _with_llm(
            told, digest, candidates, templates, apply_mode, options, engine, model,
            plan_id, on_event,
        )  # fmt: skip
    result.apply_mode = apply_mode
    if result.plan is not None or result.yaml_text:
        questions = {str(q["var"]): q for q in result.questions if q.get("var")}
        source: Any = result.yaml_text
        result.requirements = build_requirements(source, catalog=registry, var_questions=questions)
    return result


def _checked_instruction(instruction: str) -> str:
    text = (instruction or "").strip()
    if not text:
        raise UserInputError(
            "指示が空です",
            hint="作りたい業務手順を文章で書いてください（例: 請求書ZIPと入金明細Excelを照合して"
            "差異をExcelに出力）",
            code="DESIGN_EMPTY_INSTRUCTION",
        )
    if len(text) > MAX_INSTRUCTION_CHARS:
        raise UserInputError(
            f"指示が長すぎます（{len(text):,} 文字、上限 {MAX_INSTRUCTION_CHARS:,} 文字）",
            hint="手順の要点だけを書き、詳しい規程や手順書は参考ドキュメントとして添付してください",
            code="DESIGN_INSTRUCTION_TOO_LONG",
        )
    return text


def _digest(
    documents_text: DocumentDigest | Sequence[str] | None, options: DesignEngineOptions
) -> DocumentDigest:
    if isinstance(documents_text, DocumentDigest):
        return documents_text
    documents = [
        DesignDocument(name=f"文書{number}", text=text)
        for number, text in enumerate(documents_text or (), start=1)
        if text and text.strip()
    ]
    return digest_documents(documents, max_chars=options.max_docs_chars)


def _checked(
    plan_dict: dict[str, Any], engine: PlanEngine, reasoning: str, **fields: Any
) -> GeneratedPlan:
    """The YAML of ``plan_dict`` checked and, when it validates, dry-run (not while
    questions are open: their vars have no value yet)."""
    yaml_text = yaml.safe_dump(plan_dict, allow_unicode=True, sort_keys=False)
    loaded = check_plan_text(yaml_text)
    report = engine.check(yaml_text)
    dry_run, seconds = None, None
    if loaded.plan is not None and report.ok and not fields.get("questions"):
        started = time.perf_counter()
        dry_run = engine.dry_run(loaded.plan)
        seconds = time.perf_counter() - started
    return GeneratedPlan(
        plan=loaded.plan,
        yaml_text=yaml_text,
        reasoning=reasoning,
        report=report,
        dry_run=dry_run,
        dry_run_seconds=seconds,
        **fields,
    )


def _composed(
    templates: Sequence[TemplateSpec],
    registry: BlockCatalog,
    engine: PlanEngine,
    plan_id: str | None,
    reasoning: str,
    digest: DocumentDigest,
    candidates: list[BlockCandidate],
) -> GeneratedPlan:
    composed = compose_templates(templates, registry, plan_id=plan_id or DEFAULT_PLAN_ID)
    return _from_compose(composed, engine, reasoning, [t.id for t in templates], digest, candidates)


def _from_compose(
    composed: ComposeResult,
    engine: PlanEngine,
    reasoning: str,
    template_ids: list[str],
    digest: DocumentDigest,
    candidates: list[BlockCandidate],
    notes: Sequence[str] = (),
) -> GeneratedPlan:
    warnings = [*notes, *(conflict.message for conflict in composed.conflicts), *digest.warnings]
    if composed.unbound:
        warnings.append(
            "テンプレートの入力のうち、つなぐ出力が決まらなかったものを変数にしました: "
            + ", ".join(composed.unbound)
            + "（設計チャットで値を決めてください）"
        )
    return _checked(
        composed.plan,
        engine,
        reasoning,
        templates=template_ids,
        conflicts=list(composed.conflicts),
        candidates=candidates,
        warnings=warnings,
    )


def _offline(
    instruction: str,
    templates: Sequence[TemplateSpec],
    library: TemplateLibrary,
    registry: BlockCatalog,
    engine: PlanEngine,
    plan_id: str | None,
    digest: DocumentDigest,
    columns: Sequence[str] = (),
) -> GeneratedPlan:
    procedure = read_procedure(instruction, [d.text for d in digest.documents if d.text])
    if templates:
        composed = compose_templates(templates, registry, plan_id=plan_id or DEFAULT_PLAN_ID)
        result = _from_compose(
            composed, engine, "offline-compose: selected templates", [t.id for t in templates],
            digest, [], notes=[TEMPLATES_NOTE],
        )  # fmt: skip
        result.offline = True
        result.procedure = procedure
        result.coverage = check_coverage(procedure, composed.plan)
        return result
    result = _from_procedure(procedure, instruction, engine, plan_id, digest, columns)
    result.offline = True
    return result


def offline_gaps(procedure: Procedure) -> list[Gap]:
    """What rules alone cannot build: the procedure's gaps, steps and files that need a
    language model, an instruction in which nothing was recognised."""
    gaps = list(procedure.gaps)
    llm_steps = [step for step in procedure.steps if step.kind in ("extract", "classify")]
    documents = [item for item in procedure.inputs if item.format in ("zip", "pdf")]
    if llm_steps or documents:
        what = "、".join(
            [
                *(f"「{step.source}」" for step in llm_steps),
                *(f"「{item.source}」" for item in documents),
            ]
        )
        gaps.append(
            Gap(
                kind="needs_llm",
                message=f"{what}には LLM の設定が必要です（PDF・証憑からの項目抽出や分類は、"
                "文章を読む処理のため規則だけでは作れません）。LLM を設定してから生成してください",
                source=what,
            )
        )
    for step in procedure.steps:
        if step.kind == "aggregate" and step.missing:
            gaps.append(
                Gap(
                    kind="not_understood",
                    message=f"「{step.source}」で集計する列と集計の仕方が指示にありません"
                    "（例: 「金額の合計」「件数」）",
                    source=step.source,
                )
            )
    if not procedure.steps and not procedure.outputs:
        gaps.append(Gap(kind="not_understood", message=NOT_UNDERSTOOD))
    return gaps


NOT_UNDERSTOOD = (
    "指示から表の処理（読込・絞り込み・集計・並べ替え・重複除去・結合・照合・計算・出力）を"
    "読み取れませんでした。「経費.csv の金額が5万円以上の行を部門別に合計して Excel に出力」"
    "のように、ファイル・列・条件・出力を書いてください"
)


def _from_procedure(
    procedure: Procedure,
    instruction: str,
    engine: PlanEngine,
    plan_id: str | None,
    digest: DocumentDigest,
    columns: Sequence[str] = (),
) -> GeneratedPlan:
    gaps = offline_gaps(procedure)
    if gaps:
        return GeneratedPlan(
            plan=None,
            yaml_text="",
            reasoning="offline: " + ", ".join(sorted({gap.kind for gap in gaps})),
            procedure=procedure,
            gaps=gaps,
            warnings=list(digest.warnings),
        )
    built = plan_from_procedure(
        procedure,
        plan_id=plan_id or DEFAULT_PLAN_ID,
        description=instruction.strip()[:200],
        columns=columns,
    )
    result = _checked(
        built.plan,
        engine,
        "offline-rules: the instruction's requirements, one block each",
        warnings=[OFFLINE_NOTE, *digest.warnings],
        questions=built.questions,
    )
    result.procedure = procedure
    result.coverage = check_coverage(procedure, built.plan)
    return result


def _tokens(usage: Mapping[str, Any]) -> dict[str, int] | None:
    """Prompt and completion tokens summed over the models used; None when unreported."""
    if not usage:
        return None
    return {
        "prompt": sum(int(item.get("input_tokens") or 0) for item in usage.values()),
        "completion": sum(int(item.get("output_tokens") or 0) for item in usage.values()),
    }


def _with_llm(
    instruction: str,
    digest: DocumentDigest,
    candidates: list[BlockCandidate],
    templates: Sequence[TemplateSpec],
    apply_mode: str,
    options: DesignEngineOptions,
    engine: PlanEngine,
    model: BaseChatModel,
    plan_id: str | None,
    on_event: EventCallback | None,
) -> GeneratedPlan:
    from langchain_core.callbacks import get_usage_metadata_callback

    from keiri_agent.plans.design.llm_designer import LLMDesigner

    designer = LLMDesigner(model, engine, options, on_event=on_event)
    try:
        with get_usage_metadata_callback() as usage:
            result = designer.design(
                instruction,
                digest,
                candidates,
                templates,
                apply_mode="llm-only" if apply_mode == "llm-only" else "hint",
            )
        result.tokens = _tokens(usage.usage_metadata)
    except LLMError as error:
        if not options.fallback:
            raise
        fallback = build_fallback_plan(instruction, plan_id=plan_id, candidates=candidates)
        return _checked(
            fallback,
            engine,
            f"fallback: {error.code}",
            candidates=candidates,
            warnings=[
                f"LLM による生成に失敗したため、安全な代替の Plan を返しました: {error.message}",
                *digest.warnings,
            ],
        )
    return result
