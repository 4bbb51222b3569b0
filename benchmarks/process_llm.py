"""``ai.process_llm`` concurrency: 200 files against a scripted model that sleeps 200 ms.

Runs the block the way the engine does (catalog defaults, the block's own thread
pool) over 200 extracted files, one structured call per file, each call sleeping
200 ms in the scripted chat model. Prints ``name: value`` lines per concurrency:

- ``process_llm.c{N}.wall_s`` — wall time of the block run;
- ``process_llm.c{N}.wall_over_ideal`` — wall ÷ ideal, where ideal is
  ceil(200 / N) × 200 ms (the calls alone at that concurrency). Target ≤ 1.2;
- ``process_llm.c{N}.thread_pool_over_ideal`` — the same sleeps on a bare
  ``ThreadPoolExecutor(N)`` in the same run: the floor this machine allows.

N is the block's default ``max_concurrency`` (4) and 8.

    uv run python benchmarks/process_llm.py [--files 200] [--delay-ms 200]
"""

from __future__ import annotations

import argparse
import logging
import math
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from keiri_agent.blocks.base import BlockContext
from keiri_agent.blocks.llm import ProcessLLMBlock
from keiri_agent.config import Settings
from keiri_agent.llm.testing import ScriptedChatModel
from keiri_agent.plans.catalog.catalog import BlockCatalog

SCHEMA = {"取引先": "string", "請求金額": "integer", "支払期日": "string"}


def evidence(files: int) -> dict[str, Any]:
    entries = []
    for index in range(files):
        group = f"取引先{index % 20:02d}"
        text = (
            f"請求書 No.{index:04d}\n{group} 御中\n"
            f"請求金額 {1000 + index:,} 円\n支払期日 2026-12-31\n"
        )
        entries.append(
            {
                "group": group,
                "path": f"{group}/invoice_{index:04d}.pdf",
                "name": f"invoice_{index:04d}.pdf",
                "size": len(text.encode()),
                "text": text * 20,
                "truncated": False,
                "error": None,
            }
        )
    return {"groups": sorted({e["group"] for e in entries}), "files": entries, "skipped": []}


def run_block(files: int, delay_s: float, concurrency: int) -> float:
    catalog = BlockCatalog.discover()
    spec = catalog.resolve("ai.process_llm")
    replies = [
        {"取引先": f"取引先{i % 20:02d}", "請求金額": 1000 + i, "支払期日": "2026-12-31"}
        for i in range(files)
    ]
    model = ScriptedChatModel(replies, delay_s=delay_s)
    block = ProcessLLMBlock(chat_model_factory=lambda _settings: model)
    inputs = {
        **spec.input_defaults(),
        "evidence_data": evidence(files),
        "prompt": "請求書から取引先・請求金額・支払期日を抽出してください",
        "output_schema": SCHEMA,
        "max_concurrency": concurrency,
    }
    ctx = BlockContext(
        run_id="bench",
        plan_id="bench",
        node_id="extract",
        settings=Settings(provider="offline"),
        logger=logging.getLogger("bench"),
    )
    started = time.perf_counter()
    outputs = block.run(inputs, ctx)
    wall = time.perf_counter() - started
    summary = outputs["summary"]
    if summary["succeeded"] != files or len(model.calls) != files:
        raise SystemExit(f"expected {files} answers, got {summary}")
    return wall


def bare_pool(files: int, delay_s: float, concurrency: int) -> float:
    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        list(pool.map(lambda _i: time.sleep(delay_s), range(files)))
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--delay-ms", type=float, default=200.0)
    args = parser.parse_args()
    delay_s = args.delay_ms / 1000
    for concurrency in (4, 8):
        ideal = math.ceil(args.files / concurrency) * delay_s
        wall = run_block(args.files, delay_s, concurrency)
        floor = bare_pool(args.files, delay_s, concurrency)
        print(f"process_llm.c{concurrency}.wall_s: {wall:.2f}")
        print(f"process_llm.c{concurrency}.wall_over_ideal: {wall / ideal:.3f}")
        print(f"process_llm.c{concurrency}.thread_pool_over_ideal: {floor / ideal:.3f}")


if __name__ == "__main__":
    main()
