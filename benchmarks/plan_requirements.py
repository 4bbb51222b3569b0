"""Plan generation judged against what was asked (issue 27): acceptable / honest / wrong.

The sets ``benchmarks/data/plan_requirements_blind*.jsonl`` were written by helpers who
never read the templates, the rules or the issue's examples. Each line is an
instruction, its ``reach`` (``offline``: table steps only, every parameter given;
``needs_llm``; ``refuse``: a missing source, an action no block does, a parameter
nobody stated) and the expected requirement list (inputs, steps with parameters,
outputs). An ``offline`` line asking a total no table block computes (a metric outside
``procedure.Metric``) is out of the catalog's reach: it is scored as one to refuse. Each
instruction is generated offline (``DesignService`` with the offline provider, as
``keiri-agent plan generate`` does) and scored:

- **acceptable**: the verdict is ``ok`` (exit 0) and the expected requirements, read as
  a ``Procedure``, are all covered by the Plan (``coverage.check_coverage``: each
  condition, key, group, metric and output with its parameters, in the flow) with no
  unrelated node;
- **honest**: the verdict is not ``ok`` (the user is told what is missing or cannot be
  built: exit ≠ 0);
- **wrong-but-success**: the verdict is ``ok`` but the expected requirements are not
  covered, or the instruction should have been refused.

Prints ``<set>.<figure>: value`` lines; ``--details`` lists every instruction with its
verdict and what was missed (only for sets already tuned on: pass ``--details`` knowingly).

    uv run python benchmarks/plan_requirements.py [--set blindN] [--details]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import unicodedata
from collections import Counter
from pathlib import Path
from typing import Any, get_args

from keiri_agent.config import Settings
from keiri_agent.plans.design.coverage import check_coverage
from keiri_agent.plans.design.procedure import (
    COUNT_ALL,
    Condition,
    InputSpec,
    Metric,
    OutputSpec,
    Procedure,
    StepSpec,
)
from keiri_agent.plans.design.procedure_rules import without_units
from keiri_agent.services.design import DesignRequest, DesignService

DATA = Path(__file__).resolve().parent / "data"
SETS = tuple(
    sorted(
        (
            path.stem.removeprefix("plan_requirements_")
            for path in DATA.glob("plan_requirements_blind*.jsonl")
        ),
        key=lambda name: int(name.removeprefix("blind")),
    )
)
"""Every set in ``benchmarks/data``, in the order they were written."""


def _without_units(value: Any) -> Any:
    """A column name with its unit (「水揚げ量(kg)」) as the generator reads it: the unit in
    parentheses is said of the column, not a part of its name (the run then names the column
    it cannot find, if the file's header has the unit); full-width brackets and digits as
    NFKC (「滞納月数［か月］」 is read 「滞納月数[か月]」); a trailing 「欄」 is the field word
    (「アレルギー欄」 is アレルギー, as 185 of the 186 labels of a 「…欄」 write it)."""
    if isinstance(value, str):  # 「アレルギー欄」: the field word, as the rules read it
        return re.sub(r"(?<=[^\s空])欄$", "", without_units(value))
    if isinstance(value, list):
        return [_without_units(item) for item in value]
    if isinstance(value, dict):
        return {_without_units(key): item for key, item in value.items()}
    return value


def _nfkc(name: str | None) -> str | None:
    return unicodedata.normalize("NFKC", name) if name else name


def expected_procedure(requirements: list[dict[str, Any]]) -> Procedure:
    """The helpers' requirement list as a ``Procedure`` (one step per requirement)."""
    inputs, steps, outputs = [], [], []
    requirements = [
        {key: _without_units(value) if key != "holds" else value for key, value in item.items()}
        for item in requirements
    ]
    for item in requirements:
        kind = item["kind"]
        number = len(steps) + 1
        if kind == "input":
            fmt = item.get("format", "csv")
            # a scan, a Word document or free text: read like a PDF (by a model)
            fmt = "pdf" if fmt in ("image", "docx", "text") else fmt
            inputs.append(
                InputSpec(id=f"in{len(inputs) + 1}", format=fmt, holds=item.get("holds", ""))
            )
        elif kind == "output":
            if item.get("format") in ("excel", "csv", "docx"):
                outputs.append(  # names as the product reads them (「６月」 is 「6月」)
                    OutputSpec(
                        format=item["format"],
                        file_name=_nfkc(item.get("file_name")),
                        sheet=_nfkc(item.get("sheet")),
                    )
                )
            else:
                steps.append(StepSpec(id=f"s{number}", kind="extract", fields=["docx"]))
        elif kind == "filter":
            condition = Condition(column=item.get("column"), op=item["op"], value=item.get("value"))
            steps.append(StepSpec(id=f"s{number}", kind="filter", conditions=[condition]))
        elif kind == "aggregate":
            metrics = {
                (COUNT_ALL if k == "*" else k): v for k, v in (item.get("metrics") or {}).items()
            }
            steps.append(
                StepSpec(
                    id=f"s{number}",
                    kind="aggregate",
                    group_by=item.get("group_by") or [],
                    metrics=metrics,
                )
            )
        elif kind == "sort":
            steps.append(
                StepSpec(
                    id=f"s{number}",
                    kind="sort",
                    by=item.get("by") or [],
                    descending=bool(item.get("descending")),
                    limit=item.get("limit"),
                )
            )
        elif kind in ("select", "normalize"):
            steps.append(StepSpec(id=f"s{number}", kind=kind, columns=item.get("columns") or []))
        elif kind in ("dedupe", "join"):
            steps.append(StepSpec(id=f"s{number}", kind=kind, keys=item.get("keys") or []))
        elif kind == "reconcile":
            steps.append(
                StepSpec(
                    id=f"s{number}",
                    kind="reconcile",
                    keys=item.get("keys") or [],
                    tolerance=item.get("tolerance") or None,
                    date_window_days=item.get("date_window_days"),
                )
            )
        elif kind == "compute":
            steps.append(
                StepSpec(
                    id=f"s{number}",
                    kind="compute",
                    expressions={item["column"]: item["expression"]},
                )
            )
        elif kind in ("concat", "approval"):
            steps.append(StepSpec(id=f"s{number}", kind=kind))
        elif kind in ("extract", "classify"):
            steps.append(
                StepSpec(
                    id=f"s{number}",
                    kind=kind,
                    fields=item.get("fields") or [],
                    labels=item.get("labels") or [],
                )
            )
    return Procedure(inputs=inputs, steps=steps, outputs=outputs)


_SAME_SENSE = {"in": "==", "not_in": "!=", "==": "==", "!=": "!="}


def extra_conditions(expected: Procedure, plan: dict[str, Any]) -> list[str]:
    """Filter conditions in the Plan that no expected condition asks for (a column and a
    comparison of the same sense): coverage checks that each requirement is met, not that
    nothing else narrows the rows (「3千円未満」 read from a reason beside 「3千円以上」)."""
    wanted = {
        (condition.column, _SAME_SENSE.get(condition.op, condition.op))
        for step in expected.steps
        if step.kind == "filter"
        for condition in step.conditions
    }
    equal = {
        condition.column: (
            condition.value if isinstance(condition.value, list) else [condition.value]
        )
        for step in expected.steps
        if step.kind == "filter"
        for condition in step.conditions
        if condition.op in ("==", "in")
    }
    extra = []
    for node in plan.get("graph", []):
        if node.get("block") != "table.filter":
            continue
        for item in (node.get("in") or {}).get("conditions") or []:
            column = item.get("col")
            if isinstance(column, str):  # a total's column (制作費_sum) is the expected 制作費
                column = re.sub(r"_(?:sum|mean|count|min|max)$", "", column)
            said = (column, _SAME_SENSE.get(item.get("op"), item.get("op")))
            if said[1] == "!=" and column in equal and item.get("value") not in equal[column]:
                continue  # 「区分が「許可」の行だけ … ※「予備」は含めません」: implied by the ==
            if isinstance(said[0], str) and not said[0].startswith("$") and said not in wanted:
                extra.append(f"✗ 指示に無い条件: {said[0]} {item.get('op')} {item.get('value')!r}")
    return extra


_METRICS = set(get_args(Metric))


def beyond_the_blocks(requirements: list[dict[str, Any]]) -> bool:
    """True when a requirement asks what no table block computes (a median, a distinct
    count): the writer labelled it ``offline``, but the honest answer is a refusal."""
    return any(
        metric not in _METRICS
        for item in requirements
        if item["kind"] == "aggregate"
        for metrics in (item.get("metrics") or {}).values()
        for metric in metrics
    )


def score(path: Path, service: DesignService, details: bool) -> dict[str, Any]:
    rows = [
        json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
    ]
    outcomes: Counter[str] = Counter()
    verdicts: Counter[str] = Counter()
    in_reach = 0
    for row in rows:
        result = service.generate(DesignRequest(row["instruction"])).result
        verdict = result.verdict
        verdicts[verdict] += 1
        reach = row["reach"]
        if reach == "offline" and beyond_the_blocks(row["requirements"]):
            reach = "refuse"
        if reach != "offline":  # refused or not, only the verdict is scored
            row["requirements"] = []
        expected = expected_procedure(row["requirements"])
        problems: list[str] = []
        if reach == "offline":
            in_reach += 1
        if verdict != "ok":
            outcome = "honest"
        elif reach != "offline":
            outcome = "wrong_but_success"
            problems.append("should have been refused")
        else:
            plan = (
                json.loads(
                    json.dumps(
                        result.plan.model_dump(by_alias=True, exclude_none=True), default=str
                    )
                )
                if result.plan
                else {}
            )
            coverage = check_coverage(expected, plan)
            problems = [line for line in coverage.lines() if not line.startswith("✓")]
            problems += extra_conditions(expected, plan)
            acceptable = coverage.ok and not coverage.waiting and not problems
            outcome = "acceptable" if acceptable else "wrong_but_success"
        outcomes[f"{reach}.{outcome}"] += 1
        if details:
            print(
                f"-- {row['id']} [{reach}] {verdict} → {outcome}: {row['instruction']}",
                file=sys.stderr,
            )
            for line in problems:
                print(f"     {line}", file=sys.stderr)
            for gap in result.gaps:
                print(f"     gap: {gap.message}", file=sys.stderr)
            if verdict != "ok" and reach == "offline" and result.coverage is not None:
                for line in result.coverage.lines():
                    print(f"     ours: {line}", file=sys.stderr)
    acceptable = outcomes["offline.acceptable"]
    wrong = sum(n for key, n in outcomes.items() if key.endswith("wrong_but_success"))
    return {
        "instructions": len(rows),
        "in_reach": in_reach,
        "acceptable": acceptable,
        "acceptable_share_in_reach": round(acceptable / in_reach, 3) if in_reach else None,
        "wrong_but_success": wrong,
        "honest_refusals_out_of_reach": outcomes["needs_llm.honest"] + outcomes["refuse.honest"],
        "out_of_reach": len(rows) - in_reach,
        "verdicts": dict(sorted(verdicts.items())),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--set", action="append", choices=SETS, help="default: every set")
    parser.add_argument("--details", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home:
        settings = Settings(_env_file=None, provider="offline", home=Path(home))  # type: ignore[call-arg]
        service = DesignService(settings)
        for name in args.set or SETS:
            path = DATA / f"plan_requirements_{name}.jsonl"
            figures = score(path, service, args.details)
            for key, value in figures.items():
                print(f"{name}.{key}: {value}")


if __name__ == "__main__":
    main()
