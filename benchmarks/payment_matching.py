"""入金消込 end to end (issue 32) on labelled sets, through the block a Plan uses.

Each set (``benchmarks/data/payment_matching_blind*/``) was written by a helper who never
read the matching code: a bank statement as a bank exports it (``bank.csv``), open
invoices (``invoices.csv``), a customer master (``customers.csv``) and ``expected.json``,
every bank row labelled by hand: ``matched`` (customer, invoices, fee), ``review`` (a
careful accountant would ask first) or ``not_receivable`` (withdrawals, interest, …).
The files go to ``accounting.match_payments`` as uploaded files, as in a Plan run.
Prints per set:

- ``rows`` and ``right`` — rows whose outcome equals the label (matched: the same
  customer, the same invoices and the same fee; review; not a payment), and its share;
- ``wrong_customer`` — matched to another customer than labelled (target 0);
- ``wrong_invoices`` — the right customer, other invoices or another fee;
- ``guessed`` — matched although labelled review (target 0: a doubtful line must go
  to 要確認);
- ``left_for_person`` — labelled matched but sent to 要確認 (honest, but work);
- ``open_after`` — invoices whose balance after matching equals the label's.

``--details`` lists every row whose outcome differs from its label.
Reproduce: ``.venv/bin/python benchmarks/payment_matching.py [--set blind1] [--details]``.
"""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path
from typing import Any

from keiri_agent.blocks.base import BlockContext
from keiri_agent.blocks.payment_matching import MatchPaymentsBlock
from keiri_agent.config import Settings
from keiri_agent.errors import KeiriAgentError

DATA = Path(__file__).parent / "data"


def _run(folder: Path, as_of: str | None) -> dict[str, Any]:
    def upload(name: str) -> dict[str, Any]:
        return {"name": name, "data": (folder / name).read_bytes()}

    def named(stem: str) -> str:  # bank.csv / bank.txt, invoices.csv / invoices.xlsx, …
        return next(p.name for p in sorted(folder.iterdir()) if p.stem == stem)

    ctx = BlockContext("bench", "bench", "match", Settings(), logging.getLogger("bench"))
    inputs = {
        "bank": upload(named("bank")),
        "invoices": upload(named("invoices")),
        "customers": upload(named("customers")),
        "as_of": as_of,
    }
    return MatchPaymentsBlock().run(inputs, ctx)


def score(folder: Path, details: bool) -> dict[str, Any]:
    expected = json.loads((folder / "expected.json").read_text(encoding="utf-8"))
    try:
        out = _run(folder, expected.get("as_of"))
    except KeiriAgentError as error:  # the whole set refused: nothing right
        print(f"{folder.name}: rows {len(expected['lines'])} refused: {error}")
        return {}
    got: dict[int, dict[str, Any]] = {}
    for row in out["matched"]:
        invoices = sorted(filter(None, row["請求書番号"].split("、")))
        got[row["明細行"]] = {
            "outcome": "matched",
            "customer": row["得意先コード"],
            "invoices": invoices,
            "fee": row["手数料"],
            "why": f"{row['区分']}: {row['名義の判定']} / {row['金額の判定']}",
        }
    for row in out["review"]:
        got[row["明細行"]] = {
            "outcome": "review",
            "customer": row["得意先コード"],
            "why": f"{row['理由']} {row['候補']}",
        }
    for row in out["not_payments"]:
        got[row["明細行"]] = {"outcome": "not_receivable", "why": row["理由"]}
    counts = dict.fromkeys(
        ("right", "wrong_customer", "wrong_invoices", "guessed", "left_for_person", "other"), 0
    )
    misses = []
    for label in expected["lines"]:
        mine = got.get(label["row"], {"outcome": "missing", "why": ""})
        verdict = _verdict(label, mine)
        counts[verdict] += 1
        if verdict != "right":
            misses.append((label, mine, verdict))
    balances = {row["請求書番号"]: row["残高"] for row in out["open_invoices"]}
    labelled = expected.get("open_after", [])
    wanted = (  # [{invoice, balance}] or {invoice: balance}
        dict(labelled)
        if isinstance(labelled, dict)
        else {item["invoice"]: item["balance"] for item in labelled}
    )
    open_right = sum(1 for k, v in wanted.items() if balances.get(k, 0) == v)
    open_right -= sum(1 for k in balances if k not in wanted)
    rows = len(expected["lines"])
    print(
        f"{folder.name}: rows {rows} right {counts['right']} ({counts['right'] / rows:.1%}) "
        f"wrong_customer {counts['wrong_customer']} wrong_invoices {counts['wrong_invoices']} "
        f"guessed {counts['guessed']} left_for_person {counts['left_for_person']} "
        f"other {counts['other']} open_after {open_right}/{len(wanted)}"
    )
    if details:
        for label, mine, verdict in misses:
            print(
                f"  row {label['row']} [{verdict}] want {label['outcome']} {label.get('customer')} "
                f"{label.get('invoices')} fee {label.get('fee')} ({label.get('kind')}: "
                f"{label.get('note', '')})\n      got {mine.get('outcome')} "
                f"{mine.get('customer')} {mine.get('invoices')} fee {mine.get('fee')} "
                f"— {mine.get('why')}"
            )
    return counts


def _verdict(label: dict[str, Any], mine: dict[str, Any]) -> str:
    want, have = label["outcome"], mine["outcome"]
    if want == "matched":
        if have == "matched":
            if mine["customer"] != label["customer"]:
                return "wrong_customer"
            same = sorted(label["invoices"]) == mine["invoices"]
            return "right" if same and mine["fee"] == label.get("fee", 0) else "wrong_invoices"
        return "left_for_person" if have == "review" else "other"
    if want == "review":
        if have == "matched":
            return "guessed"
        return "right" if have == "review" else "other"
    if have == "matched":
        return "guessed"
    return "right" if have == "not_receivable" else "other"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--set", help="one set, e.g. blind1 (default: all)")
    parser.add_argument("--details", action="store_true", help="list every miss")
    args = parser.parse_args()
    folders = sorted(DATA.glob("payment_matching_*"))
    if args.set:
        folders = [f for f in folders if f.name.endswith(args.set)]
    for folder in folders:
        score(folder, args.details)


if __name__ == "__main__":
    main()
