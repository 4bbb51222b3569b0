"""Offline design (seed 003 §5.3, issue 11 §8): a Plan from templates, without an LLM.

``design_offline(instruction, library, catalog)`` picks templates by the instruction
and composes them (``compose.compose_templates``); it never invents a node.

Selection rule (docs/design.md "Offline design"):

1. Only templates whose blocks are all in the catalog take part (the others are
   named in ``OfflineDesign.notes``).
2. BM25 over the templates (``TemplateLibrary.search``). Nothing is chosen when the
   best score is below ``MIN_SCORE``: the instruction is not covered. Otherwise the
   best template and every template scoring at least ``RELATIVE_CUTOFF`` × the best
   are kept, at most ``MAX_MATCHED``.
3. Gaps are closed: for each import of a chosen template that no chosen template
   exports (same name, agreeing type), the usable template exporting it that scores
   best for the instruction (then by id) is added, and its own imports are looked at
   in turn (at most ``MAX_TEMPLATES`` in all).
4. ``compose_templates`` orders and wires them; what stays unbound becomes a Plan var.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from keiri_agent.plans.catalog.catalog import BlockCatalog
from keiri_agent.plans.design.compose import compose_templates, types_agree
from keiri_agent.plans.design.models import ComposeResult, TemplateSpec
from keiri_agent.plans.design.templates import TemplateLibrary, missing_blocks

MIN_SCORE = 3.0
"""BM25 score the best template needs for the instruction to count as covered."""
RELATIVE_CUTOFF = 0.5
"""Other templates are kept when they score at least this share of the best."""
MAX_MATCHED = 4
MAX_TEMPLATES = 8

NOT_COVERED = (
    "この指示に合うテンプレートが見つかりませんでした。"
    "LLM を設定して自動生成するか、指示の言葉を変える（例: 「入金明細」「照合」「集計」）か、"
    "designs/templates/ にテンプレートを追加してください。"
)


@dataclass(frozen=True)
class ChosenTemplate:
    """A template offline design used, and why (``reason`` in Japanese)."""

    template_id: str
    title: str
    score: float
    """BM25 score for the instruction (0 when it was added only to close a gap)."""
    reason: str


@dataclass
class OfflineDesign:
    """What offline design made: the composed Plan, or None with a message saying why."""

    result: ComposeResult | None
    chosen: list[ChosenTemplate] = field(default_factory=list)
    message: str = ""
    """Japanese, for the page / CLI."""
    notes: list[str] = field(default_factory=list)
    """Japanese: templates left out because the catalog lacks their blocks."""


def design_offline(
    instruction: str,
    library: TemplateLibrary,
    catalog: BlockCatalog,
    *,
    plan_id: str | None = None,
) -> OfflineDesign:
    """Templates found by ``instruction``, composed (see the module docstring)."""
    usable: dict[str, TemplateSpec] = {}
    notes: list[str] = []
    for template in library.all():
        absent = missing_blocks(template, catalog)
        if absent:
            notes.append(
                f"テンプレート {template.id}（{template.title}）はブロック "
                f"{', '.join(absent)} がカタログに無いため使いませんでした。"
            )
        else:
            usable[template.id] = template
    found = library.search(instruction, k=max(len(library), 1))
    hits = [(template, score) for template, score in found if template.id in usable]
    if not hits or hits[0][1] < MIN_SCORE:
        blocked = [t.title for t, score in found if t.id not in usable and score >= MIN_SCORE]
        message = NOT_COVERED
        if blocked:
            message += (
                f"（指示に近いテンプレート {'、'.join(blocked)} は、必要なブロックが"
                "カタログに無いため使えません。）"
            )
        return OfflineDesign(None, message=message, notes=notes)
    best = hits[0][1]
    scores = {template.id: score for template, score in hits}
    chosen: list[ChosenTemplate] = []
    for template, score in hits[:MAX_MATCHED]:
        if score >= RELATIVE_CUTOFF * best:
            chosen.append(
                ChosenTemplate(
                    template.id, template.title, score, f"指示に一致（スコア {score:.1f}）"
                )
            )
    _close_gaps(chosen, usable, scores)
    templates = [usable[c.template_id] for c in chosen]
    result = compose_templates(
        templates,
        catalog,
        plan_id=plan_id or f"offline_{chosen[0].template_id}",
        description=f"オフライン設計: {instruction.strip()[:200]}",
    )
    return OfflineDesign(result, chosen, _message(chosen, result), notes)


def _close_gaps(
    chosen: list[ChosenTemplate], usable: dict[str, TemplateSpec], scores: dict[str, float]
) -> None:
    index = 0
    while index < len(chosen) and len(chosen) < MAX_TEMPLATES:
        template = usable[chosen[index].template_id]
        index += 1
        for name, port in template.imports.items():
            if _provided(name, port.type, chosen, usable):
                continue
            providers = sorted(
                (
                    other
                    for other in usable.values()
                    if name in other.exports
                    and types_agree(other.exports[name].type, port.type)
                    and all(c.template_id != other.id for c in chosen)
                ),
                key=lambda other: (-scores.get(other.id, 0.0), other.id),
            )
            if providers and len(chosen) < MAX_TEMPLATES:
                provider = providers[0]
                chosen.append(
                    ChosenTemplate(
                        provider.id,
                        provider.title,
                        scores.get(provider.id, 0.0),
                        f"{template.title} の入力 {name} を用意するため",
                    )
                )


def _provided(
    name: str, port_type: str, chosen: list[ChosenTemplate], usable: dict[str, TemplateSpec]
) -> bool:
    for item in chosen:
        export = usable[item.template_id].exports.get(name)
        if export is not None and types_agree(export.type, port_type):
            return True
    return False


def _message(chosen: list[ChosenTemplate], result: ComposeResult) -> str:
    titles = "、".join(c.title for c in chosen)
    parts = [f"オフラインのため、指示に合うテンプレート（{titles}）を機械的に組み合わせました。"]
    if result.unbound:
        parts.append(
            f"つながっていない入力 {', '.join(result.unbound)} は vars に値を指定してください。"
        )
    if result.conflicts:
        parts.append(f"確認が必要な点が {len(result.conflicts)} 件あります。")
    return "".join(parts)
