"""Plan runner speed: per-node overhead, DAG makespan, foreach throughput.

Prints ``name: value`` lines:

- ``overhead.chain_ms_per_node`` / ``overhead.fanout_ms_per_node`` — (wall time of
  ``PlanRunner.start`` − time spent inside the blocks) ÷ nodes, on 1,000 trivial
  nodes in a chain (each reads the previous one) and fanned out (independent,
  8 workers). Includes logging, schema checks and saving the state. Target ≤ 1 ms.
- ``dag.makespan_over_critical_path`` — wall time ÷ the longest path of block
  durations, on a random 60-node DAG of sleeping nodes (10–150 ms, 64 workers, so
  the critical path is the bound). Target ≤ 1.05.
- ``foreach.wall_over_ideal`` — a foreach over 1,000 items of 20 ms at
  max_concurrency 8 ÷ the ideal 1000 × 20 ms / 8. Target ≤ 1.1.
  ``foreach.thread_pool_over_ideal`` is the same work on a bare
  ``ThreadPoolExecutor(8)`` in the same run: the floor this machine allows.

    uv run python benchmarks/plan_runner.py [--seed 7]
"""

from __future__ import annotations

import argparse
import logging
import random
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from keiri_agent.config import Settings
from keiri_agent.plans.catalog.catalog import BlockCatalog
from keiri_agent.plans.dsl.models import Plan
from keiri_agent.plans.run.runner import PlanRunner, RunResult

BLOCKS_DIR = Path(__file__).parent / "plan_blocks"
NODES = 1000


def make_plan(graph: list[dict[str, Any]], workers: int) -> Plan:
    return Plan.model_validate(
        {
            "apiVersion": "v1",
            "id": "bench",
            "version": "1.0.0",
            "policy": {"concurrency": {"default_max_workers": workers}},
            "graph": graph,
        }
    )


def sleep_node(node_id: str, ms: float = 0, value: Any = None) -> dict[str, Any]:
    return {"id": node_id, "block": "bench.sleep", "in": {"ms": ms, "value": value}}


class Bench:
    """A runner over the benchmark blocks in a throwaway runs folder."""

    def __init__(self, runs_dir: Path) -> None:
        self.catalog = BlockCatalog.discover([BLOCKS_DIR])
        spec = self.catalog.resolve("bench.sleep")
        self.blocks = sys.modules[type(self.catalog.load(spec)).__module__]
        self.runner = PlanRunner(self.catalog, Settings(), runs_dir=runs_dir, env={})

    def run(self, plan: Plan) -> tuple[float, float, RunResult]:
        """(wall seconds, seconds inside blocks, result)."""
        self.blocks.reset()
        started = time.perf_counter()
        result = self.runner.start(plan)
        wall = time.perf_counter() - started
        if result.status != "success":
            raise SystemExit(f"benchmark plan failed: {result.errors[:1]}")
        return wall, self.blocks.WORK_S[0], result


def overhead(bench: Bench) -> dict[str, float]:
    chain = [sleep_node("n0", value=0)] + [
        sleep_node(f"n{i}", value=f"${{n{i - 1}.value}}") for i in range(1, NODES)
    ]
    fanout = [sleep_node(f"n{i}", value=i) for i in range(NODES)]
    figures = {}
    for name, graph, workers in (("chain", chain, 4), ("fanout", fanout, 8)):
        bench.run(make_plan(graph[:50], workers))  # warm up imports and caches
        wall, work, _ = bench.run(make_plan(graph, workers))
        figures[f"overhead.{name}_ms_per_node"] = (wall - work) / NODES * 1000
        figures[f"overhead.{name}_wall_s"] = wall
    return figures


def dag(bench: Bench, rng: random.Random) -> dict[str, float]:
    durations: dict[str, float] = {}
    graph = []
    for index in range(60):
        node_id = f"d{index}"
        durations[node_id] = rng.uniform(10, 150)
        parents = rng.sample(range(index), k=min(index, rng.randint(0, 3)))
        value = [f"${{d{p}.value}}" for p in parents]
        graph.append(sleep_node(node_id, durations[node_id], value))
    finish: dict[str, float] = {}
    for node in graph:
        sources = [item[2:].split(".")[0] for item in node["in"]["value"]]
        start = max((finish[source] for source in sources), default=0.0)
        finish[node["id"]] = start + durations[node["id"]]
    critical_s = max(finish.values()) / 1000
    wall, _, _ = bench.run(make_plan(graph, 64))
    return {
        "dag.critical_path_s": critical_s,
        "dag.makespan_s": wall,
        "dag.makespan_over_critical_path": wall / critical_s,
    }


def foreach(bench: Bench) -> dict[str, float]:
    items, ms, concurrency = 1000, 20, 8
    loop = {
        "id": "each",
        "type": "loop",
        "foreach": {"input": list(range(items)), "max_concurrency": concurrency},
        "body": {
            "plan": {
                "graph": [sleep_node("work", ms, "${item}")],
                "exports": [{"from": "work.value", "as": "v"}],
            }
        },
        "out": {"collect": "v"},
    }
    wall, _, result = bench.run(make_plan([loop], 1))
    assert result.outputs["each"]["v"] == list(range(items))
    ideal = items * ms / 1000 / concurrency
    started = time.perf_counter()
    with ThreadPoolExecutor(concurrency) as pool:
        list(pool.map(lambda _: time.sleep(ms / 1000), range(items)))
    baseline = time.perf_counter() - started
    return {
        "foreach.wall_s": wall,
        "foreach.ideal_s": ideal,
        "foreach.wall_over_ideal": wall / ideal,
        "foreach.thread_pool_over_ideal": baseline / ideal,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    logging.disable(logging.WARNING)
    with tempfile.TemporaryDirectory() as folder:
        bench = Bench(Path(folder) / "runs")
        figures = overhead(bench)
        figures |= dag(bench, random.Random(args.seed))
        figures |= foreach(bench)
    for name, value in figures.items():
        print(f"{name}: {value:.4g}")


if __name__ == "__main__":
    main()
