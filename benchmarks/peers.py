"""The Plan runner beside LangGraph and Dask's threaded scheduler on the same DAGs.

Every shape is built for each engine (a compiled LangGraph ``StateGraph`` and a Dask
task dict once; a new ``Plan`` object before every run of the runner, untimed, as a
user's ``plan run`` loads its YAML, so nothing the runner caches per Plan object carries
over between measured runs) and run ``--repeats`` times, the engines interleaved so that
the shared machine's load hits them alike; each figure is the median. The Plan runner
is measured on the path a user takes: ``PlanRunner.start``,
with its run log (JSONL), its durable state (saved as nodes finish), input/output
schema checks and reference resolution. Prints ``name: value`` lines:

- ``chain.<engine>_us_per_node`` — wall ÷ 1,000 on a chain of 1,000 trivial nodes
  (each reads the previous one's value).
- ``chain.<engine>_cpu_us_per_node`` — the process CPU time (``time.process_time()``
  around each run: all threads, the median run) ÷ 1,000 on the same chain; with
  ``chain.ours_over_dask_cpu`` / ``chain.ours_over_langgraph_cpu`` beside the wall
  ratios. CPU is the steadier figure on a shared machine (a waiting thread costs
  none); wall stays the headline.
- ``fanout.<engine>_us_per_node`` — wall ÷ 502 on 1 → 500 → join (8 workers).
- ``dag.<engine>_makespan_over_critical_path`` — wall ÷ the longest path of sleeps
  on the uneven 60-node DAG of ``plan_runner.py`` (10–150 ms, 64 workers): LangGraph
  runs in supersteps, so a node waits for its slowest superstep sibling.
- ``foreach.<engine>_over_ideal`` — 1,000 items × 20 ms at concurrency 8 ÷ the ideal
  1000 × 20 ms / 8 (runner: a foreach loop; LangGraph: ``Send`` with
  ``max_concurrency``; Dask: 1,000 tasks on 8 threads).
- ``<shape>.ours_over_langgraph`` / ``<shape>.ours_over_dask`` — the ratios
  (< 1: the Plan runner is faster). Targets: chain ≤ 0.5 over LangGraph and ≤ 1.0
  over Dask; the runner's DAG makespan ÷ critical path ≤ 1.05.

    uv run python benchmarks/peers.py [--repeats 5] [--seed 7] [--shapes chain,fanout,dag,foreach]
"""

from __future__ import annotations

import argparse
import logging
import operator
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Annotated, Any, TypedDict

import dask.threaded
from langgraph.graph import END, START, StateGraph
from langgraph.types import Send

from keiri_agent.plans.dsl.models import Plan
from plan_runner import Bench, make_plan, sleep_node

CHAIN = 1000
FANOUT = 500
DAG_NODES = 60
ITEMS, ITEM_MS, CONCURRENCY = 1000, 20, 8
ENGINES = ("runner", "langgraph", "dask")
SHAPES = ("chain", "fanout", "dag", "foreach")


class ChainState(TypedDict):
    value: Any


class ListState(TypedDict):
    values: Annotated[list[Any], operator.add]


class ItemState(TypedDict):
    item: int


def _echo(value: Any, *_: Any) -> Any:
    return value


def _sleep(ms: float, *_: Any) -> float:
    time.sleep(ms / 1000)
    return ms


def _collect(*values: Any) -> list[Any]:
    return list(values)


# -- shapes ----------------------------------------------------------------------------


def uneven_dag(rng: random.Random) -> tuple[dict[str, float], dict[str, list[str]], float]:
    """The random DAG of ``plan_runner.dag``: durations (ms), parents, critical path (s)."""
    durations: dict[str, float] = {}
    parents: dict[str, list[str]] = {}
    for index in range(DAG_NODES):
        node_id = f"d{index}"
        durations[node_id] = rng.uniform(10, 150)
        chosen = rng.sample(range(index), k=min(index, rng.randint(0, 3)))
        parents[node_id] = [f"d{p}" for p in chosen]
    finish: dict[str, float] = {}
    for node_id, needed in parents.items():
        start = max((finish[p] for p in needed), default=0.0)
        finish[node_id] = start + durations[node_id]
    return durations, parents, max(finish.values()) / 1000


def runner_shapes(
    durations: dict[str, float], parents: dict[str, list[str]]
) -> dict[str, Callable[[], Plan]]:
    """Each shape's Plan as a factory: every run gets a Plan object of its own, as a user's
    ``plan run`` does (it loads the YAML), so nothing cached per Plan object carries over
    from one measured run to the next."""
    chain = partial(
        make_plan,
        [sleep_node("n0", value=0)]
        + [sleep_node(f"n{i}", value=f"${{n{i - 1}.value}}") for i in range(1, CHAIN)],
        4,
    )
    fanout = partial(
        make_plan,
        [sleep_node("root", value=0)]
        + [sleep_node(f"b{i}", value="${root.value}") for i in range(FANOUT)]
        + [sleep_node("join", value=[f"${{b{i}.value}}" for i in range(FANOUT)])],
        CONCURRENCY,
    )
    dag = partial(
        make_plan,
        [
            sleep_node(node_id, durations[node_id], [f"${{{p}.value}}" for p in parents[node_id]])
            for node_id in durations
        ],
        64,
    )
    loop = {
        "id": "each",
        "type": "loop",
        "foreach": {"input": list(range(ITEMS)), "max_concurrency": CONCURRENCY},
        "body": {
            "plan": {
                "graph": [sleep_node("work", ITEM_MS, "${item}")],
                "exports": [{"from": "work.value", "as": "v"}],
            }
        },
        "out": {"collect": "v"},
    }
    foreach = partial(make_plan, [loop], 1)
    return {"chain": chain, "fanout": fanout, "dag": dag, "foreach": foreach}


def langgraph_shapes(
    durations: dict[str, float], parents: dict[str, list[str]]
) -> dict[str, Callable[[], Any]]:
    chain = StateGraph(ChainState)
    for index in range(CHAIN):
        chain.add_node(f"n{index}", lambda state: {"value": state["value"]})
        chain.add_edge(START if index == 0 else f"n{index - 1}", f"n{index}")
    chain.add_edge(f"n{CHAIN - 1}", END)
    chain_app = chain.compile()

    fanout = StateGraph(ListState)
    fanout.add_node("root", lambda state: {"values": [0]})
    fanout.add_edge(START, "root")
    branches = [f"b{i}" for i in range(FANOUT)]
    for branch in branches:
        fanout.add_node(branch, lambda state: {"values": [1]})
        fanout.add_edge("root", branch)
    fanout.add_node("join", lambda state: {"values": [len(state["values"])]})
    fanout.add_edge(branches, "join")
    fanout.add_edge("join", END)
    fanout_app = fanout.compile()

    dag = StateGraph(ListState)
    for node_id, ms in durations.items():
        dag.add_node(node_id, lambda state, ms=ms: {"values": [_sleep(ms)]})
        needed = parents[node_id]
        if not needed:
            dag.add_edge(START, node_id)
        elif len(needed) == 1:
            dag.add_edge(needed[0], node_id)
        else:
            dag.add_edge(needed, node_id)
    dag_app = dag.compile()

    each = StateGraph(ListState)
    each.add_node("dispatch", lambda state: {})
    each.add_node("work", lambda state: {"values": [_echo(state["item"], _sleep(ITEM_MS))]})
    each.add_edge(START, "dispatch")
    each.add_conditional_edges(
        "dispatch", lambda state: [Send("work", {"item": i}) for i in range(ITEMS)], ["work"]
    )
    each.add_edge("work", END)
    each_app = each.compile()

    limit = {"recursion_limit": CHAIN + 10}
    return {
        "chain": lambda: chain_app.invoke({"value": 0}, limit),
        "fanout": lambda: fanout_app.invoke({"values": []}, {"max_concurrency": CONCURRENCY}),
        "dag": lambda: dag_app.invoke({"values": []}, {"max_concurrency": 64}),
        "foreach": lambda: each_app.invoke({"values": []}, {"max_concurrency": CONCURRENCY}),
    }


def dask_shapes(
    durations: dict[str, float], parents: dict[str, list[str]]
) -> dict[str, Callable[[], Any]]:
    chain: dict[str, Any] = {"n0": (_echo, 0)}
    chain |= {f"n{i}": (_echo, f"n{i - 1}") for i in range(1, CHAIN)}
    fanout: dict[str, Any] = {"root": (_echo, 0)}
    fanout |= {f"b{i}": (_echo, "root") for i in range(FANOUT)}
    fanout["join"] = (_collect, *[f"b{i}" for i in range(FANOUT)])
    dag: dict[str, Any] = {
        node_id: (_sleep, ms, *parents[node_id]) for node_id, ms in durations.items()
    }
    each: dict[str, Any] = {f"w{i}": (_sleep, ITEM_MS, i) for i in range(ITEMS)}
    each["all"] = (_collect, *[f"w{i}" for i in range(ITEMS)])
    get = dask.threaded.get
    return {
        "chain": lambda: get(chain, f"n{CHAIN - 1}", num_workers=4),
        "fanout": lambda: get(fanout, "join", num_workers=CONCURRENCY),
        "dag": lambda: get(dag, list(durations), num_workers=64),
        "foreach": lambda: get(each, "all", num_workers=CONCURRENCY),
    }


# -- measuring -------------------------------------------------------------------------


def timed(call: Callable[[], Any]) -> tuple[float, float]:
    """(wall seconds, process CPU seconds of all threads) of one call."""
    cpu_started = time.process_time()
    started = time.perf_counter()
    call()
    return time.perf_counter() - started, time.process_time() - cpu_started


def measure(
    bench: Bench, repeats: int, seed: int, shapes: tuple[str, ...] = SHAPES
) -> dict[str, float]:
    durations, parents, critical_s = uneven_dag(random.Random(seed))
    plans = runner_shapes(durations, parents)
    calls: dict[str, dict[str, Callable[[], Any]]] = {
        "langgraph": langgraph_shapes(durations, parents),
        "dask": dask_shapes(durations, parents),
    }
    bench.run(make_plan([sleep_node("warm", value=0)], 1))
    bench.run(plans["fanout"]())  # warm up: imports, caches, thread pools
    for engine in ("langgraph", "dask"):
        calls[engine]["fanout"]()
    walls: dict[tuple[str, str], list[float]] = {}
    cpus: dict[tuple[str, str], list[float]] = {}
    for shape in shapes:
        shape_repeats = max(1, repeats // 2) if shape == "foreach" else repeats
        for _ in range(shape_repeats):
            for engine in ENGINES:
                # the runner's Plan is built before the clock starts, a new one per run
                call = partial(bench.run, plans[shape]()) if engine == "runner" else None
                wall, cpu = timed(call or calls[engine][shape])
                walls.setdefault((shape, engine), []).append(wall)
                cpus.setdefault((shape, engine), []).append(cpu)
    median = {key: statistics.median(values) for key, values in walls.items()}
    median_cpu = {key: statistics.median(values) for key, values in cpus.items()}
    figures: dict[str, float] = {}
    scales = {
        "chain": ("us_per_node", 1e6 / CHAIN),
        "fanout": ("us_per_node", 1e6 / (FANOUT + 2)),
        "dag": ("makespan_over_critical_path", 1 / critical_s),
        "foreach": ("over_ideal", 1 / (ITEMS * ITEM_MS / 1000 / CONCURRENCY)),
    }
    for shape in shapes:
        unit, scale = scales[shape]
        for engine in ENGINES:
            figures[f"{shape}.{engine}_{unit}"] = median[(shape, engine)] * scale
        figures[f"{shape}.ours_over_langgraph"] = (
            median[(shape, "runner")] / median[(shape, "langgraph")]
        )
        figures[f"{shape}.ours_over_dask"] = median[(shape, "runner")] / median[(shape, "dask")]
        if shape == "chain":
            for engine in ENGINES:
                figures[f"chain.{engine}_cpu_us_per_node"] = median_cpu[("chain", engine)] * scale
            figures["chain.ours_over_langgraph_cpu"] = (
                median_cpu[("chain", "runner")] / median_cpu[("chain", "langgraph")]
            )
            figures["chain.ours_over_dask_cpu"] = (
                median_cpu[("chain", "runner")] / median_cpu[("chain", "dask")]
            )
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--shapes", default=",".join(SHAPES), help="comma-separated subset of " + ",".join(SHAPES)
    )
    args = parser.parse_args()
    shapes = tuple(shape for shape in SHAPES if shape in args.shapes.split(","))
    logging.disable(logging.WARNING)
    with tempfile.TemporaryDirectory() as folder:
        figures = measure(Bench(Path(folder) / "runs"), args.repeats, args.seed, shapes)
    for name, value in figures.items():
        print(f"{name}: {value:.4g}")


if __name__ == "__main__":
    main()
