"""A registered Plan keeps the major version of each block it was validated with.

A Plan may name a block without a version (``block: excel.read_data``): the catalog then
gives the newest version. For a draft that is what its author wants; for a registered
Plan it would mean that a new major version of a block (a breaking change of its
inputs, outputs or behaviour) changes what the Plan does, silently. So registration
writes each bare block id with the caret range of the version the catalog resolved
(``excel.read_data@^1.2.0``: any later 1.x, never 2.0); after a major jump the
registered Plan is refused (``BLOCK_VERSION`` naming the block and the versions there
are) until someone reviews it and registers it again. A block already written with a
range keeps it. Loop bodies are pinned too; subflows are Plans of their own.
"""

from __future__ import annotations

from typing import Any

from keiri_agent.plans.catalog.catalog import BlockCatalog
from keiri_agent.plans.dsl.models import BlockNode, LoopNode, Plan


def pin_block_majors(plan: Plan, catalog: BlockCatalog) -> Plan:
    """``plan`` with every bare block id written ``id@^<resolved version>``."""
    return plan.model_copy(update={"graph": _pinned(plan.graph, catalog)})


def _pinned(nodes: list[Any], catalog: BlockCatalog) -> list[Any]:
    pinned: list[Any] = []
    for node in nodes:
        if isinstance(node, BlockNode) and "@" not in node.block:
            version = catalog.resolve(node.block).version
            node = node.model_copy(update={"block": f"{node.block.strip()}@^{version}"})
        elif isinstance(node, LoopNode):
            body = node.body.plan
            plan = body.model_copy(update={"graph": _pinned(body.graph, catalog)})
            node = node.model_copy(update={"body": node.body.model_copy(update={"plan": plan})})
        pinned.append(node)
    return pinned
