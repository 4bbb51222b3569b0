"""The claim check of LLM answers (``agents.helpdesk.claims``) on a blind set of claims.

Each line of ``data/claims_blind1.jsonl`` (``--set blind``, the default) or
``data/claims_dev1.jsonl`` (``--set dev``: the set the rules are tuned on) pairs a
passage with one sentence a model might write citing it, labelled ``supported`` or not
and by ``kind`` (verbatim, paraphrase, partial — supported; wrong_value, added_fact,
other_topic, negated — not). Both sets were written by helpers who never read the
product's rules; the blind set's misses are not read. The claim is checked as the
HelpDesk checks a model's answer: the sentence with a ``[1]`` marker, passage 1 the
cited one. Printed:

- ``claims.kept.<kind>`` — the share of supported claims left unmarked (a marked one is a
  false alarm: the reader is told a true sentence was not confirmed);
- ``claims.caught.<kind>`` — the share of unsupported claims marked;
- ``claims.kept`` / ``claims.caught`` over all supported / unsupported claims.

No embeddings (the words alone), so this is the check every configuration gets.
``--misses`` lists the claims judged wrongly.

    uv run python benchmarks/claim_check.py [--set dev|blind] [--misses]
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

from keiri_agent.agents.helpdesk.claims import check_claims
from keiri_agent.agents.helpdesk.models import SearchOutput

DATA = Path(__file__).resolve().parent / "data"
SETS = {"blind": DATA / "claims_blind1.jsonl", "dev": DATA / "claims_dev1.jsonl"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--misses", action="store_true", help="list the claims judged wrongly")
    parser.add_argument("--set", choices=sorted(SETS), default="blind", help="which claims")
    args = parser.parse_args()
    path = SETS[args.set]
    items = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    right: dict[str, list[bool]] = defaultdict(list)
    misses = []
    for item in items:
        passage = SearchOutput(**{k: v for k, v in item["passage"].items() if v is not None})
        checked = check_claims(item["claim"].rstrip("。") + " [1]。", {1: [passage]})
        marked = bool(checked.unsupported)
        correct = marked != item["supported"]
        right[item["kind"]].append(correct)
        if not correct:
            misses.append(f"{item['id']} {item['kind']}: {item['claim']}")
    supported = [k for k in right if any(i["kind"] == k and i["supported"] for i in items)]
    for kind in sorted(right):
        name = "kept" if kind in supported else "caught"
        print(
            f"claims.{name}.{kind}: {sum(right[kind]) / len(right[kind]):.3f} ({len(right[kind])})"
        )
    for name, kinds in (("kept", supported), ("caught", [k for k in right if k not in supported])):
        flags = [flag for kind in kinds for flag in right[kind]]
        print(f"claims.{name}: {sum(flags) / len(flags):.3f} ({len(flags)})")
    if args.misses:
        for line in misses:
            print(f"  miss: {line}")


if __name__ == "__main__":
    main()
