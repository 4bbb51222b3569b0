"""Payer names matched to a customer master (入金消込, issue 32) on labelled sets.

Each set (``benchmarks/data/payer_names_blind*.json``) was written by a helper who never
read the matching code: a customer master and bank payer strings, each labelled by hand
with the customer a careful accountant would match, or ``null`` when it must be left
to a person (unknown payer, near-miss, ambiguous). Prints per set:

- ``lines`` and ``right`` — lines whose outcome equals the label (a match to the
  labelled customer, or left for a person when labelled ``null``), and its share;
- ``wrong_customer`` — matched to another customer than labelled (target 0);
- ``guessed`` — matched although labelled ``null`` (target 0: a doubtful line must go
  to 要確認);
- ``left_for_person`` — labelled with a customer but left for a person (honest, but
  work for someone).

``--details`` lists every line whose outcome differs from its label.
Reproduce: ``.venv/bin/python benchmarks/payer_matching.py [--details]``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from keiri_agent.accounting.payer_names import Customer, PayerMatcher

DATA = Path(__file__).parent / "data"


def score(path: Path, details: bool) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    customers = [
        Customer(
            str(item["id"]),
            str(item.get("name") or ""),
            str(item.get("kana") or ""),
            tuple(str(alias) for alias in item.get("aliases") or ()),
        )
        for item in data["customers"]
    ]
    matcher = PayerMatcher(customers)
    right = wrong = guessed = left = 0
    for line in data["lines"]:
        expected = line.get("expected")
        match = matcher.match(str(line["payer"]))
        got = match.customer.id if match.customer else None
        if got == expected:
            right += 1
            continue
        if got is None:
            left += 1
        elif expected is None:
            guessed += 1
        else:
            wrong += 1
        if details:
            candidates = ", ".join(
                f"{c.customer.id}:{c.score:.2f}:{c.rule}" for c in match.candidates
            )
            print(
                f"  {line['payer']!r} expected={expected} got={got} "
                f"({line.get('note', '')}) [{candidates}]"
            )
    total = len(data["lines"])
    print(f"{path.stem}.lines: {total}")
    print(f"{path.stem}.right: {right} ({right / total:.1%})")
    print(f"{path.stem}.wrong_customer: {wrong}")
    print(f"{path.stem}.guessed: {guessed}")
    print(f"{path.stem}.left_for_person: {left}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--details", action="store_true", help="list every line that differs")
    args = parser.parse_args()
    for path in sorted(DATA.glob("payer_names_blind*.json")):
        score(path, args.details)


if __name__ == "__main__":
    main()
