"""Validating, loading and dry-running a 1,000-node Plan.

Prints ``name: value`` lines: the median milliseconds of ``PlanValidator.validate``
(target ≤ 200 ms), of ``load_plan_text``, of load + validate (``PlanEngine.check`` on
the YAML text: what ``keiri-agent plan validate`` pays once the CLI has started:
YAML, schema, plan rules and line numbers in one report) and of ``dry_run`` on a
generated plan of 1,000 built-in block nodes (each with three references and a
``when`` condition), and each as a ratio to parsing the same YAML text with PyYAML's
(libyaml) safe loader in the same run.

    uv run python benchmarks/plan_validation.py [--nodes 1000] [--repeats 7]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

import yaml

from keiri_agent.config import Settings
from keiri_agent.plans.catalog.catalog import BlockCatalog
from keiri_agent.plans.check.dry_run import dry_run
from keiri_agent.plans.check.validator import PlanValidator
from keiri_agent.plans.dsl.loader import load_plan_text
from keiri_agent.plans.engine import PlanEngine


def plan_text(nodes: int) -> str:
    """A plan of ``nodes`` text.template nodes, each reading two earlier ones."""
    graph: list[dict[str, Any]] = []
    for index in range(nodes):
        values = {"n": "${vars.label}"}
        if index:
            values["previous"] = f"${{n{index - 1}.text}}"
            values["first"] = "${n0.text}"
        node: dict[str, Any] = {
            "id": f"n{index}",
            "block": "text.template",
            "in": {"template": "{n}", "values": values},
        }
        if index % 2:
            node["when"] = {"expr": f"${{vars.limit}} > {index} and not ${{vars.skip}}"}
        graph.append(node)
    plan = {
        "apiVersion": "v1",
        "id": "bench_validation",
        "version": "1.0.0",
        "vars": {"label": "x", "limit": nodes * 2, "skip": False},
        "graph": graph,
        "exports": [{"from": f"n{nodes - 1}.text", "as": "last"}],
    }
    return yaml.safe_dump(plan, allow_unicode=True, sort_keys=False)


def median_ms(call: Callable[[], Any], repeats: int) -> float:
    call()  # warm caches (catalog schemas, compiled validators)
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        call()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    text = plan_text(args.nodes)
    catalog = BlockCatalog.discover()
    plan = load_plan_text(text)
    validator = PlanValidator(catalog)
    report = validator.validate(plan)
    assert report.ok, report.to_dict()["issues"][:3]
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml, as load_plan_text uses
    yaml_ms = median_ms(lambda: yaml.load(text, Loader=loader), args.repeats)
    validate_ms = median_ms(lambda: validator.validate(plan), args.repeats)
    load_ms = median_ms(lambda: load_plan_text(text), args.repeats)
    engine = PlanEngine(Settings())
    checked = engine.check(text)
    assert not checked.errors, [issue.code for issue in checked.errors[:3]]
    check_ms = median_ms(lambda: engine.check(text), args.repeats)
    dry_ms = median_ms(lambda: dry_run(plan, catalog), args.repeats)
    print(f"nodes: {args.nodes}")
    print(f"yaml_safe_load_ms: {yaml_ms:.1f}")
    print(f"validate_ms: {validate_ms:.1f}")
    print(f"validate_over_yaml_load: {validate_ms / yaml_ms:.2f}")
    print(f"load_plan_ms: {load_ms:.1f}")
    print(f"load_over_yaml_load: {load_ms / yaml_ms:.2f}")
    print(f"load_and_validate_ms: {check_ms:.1f}")
    print(f"load_and_validate_over_yaml_load: {check_ms / yaml_ms:.2f}")
    print(f"dry_run_ms: {dry_ms:.1f}")
    print(f"dry_run_over_yaml_load: {dry_ms / yaml_ms:.2f}")


if __name__ == "__main__":
    main()
