"""The step table: which step runs an attempt of each node type.

The scheduler (``plans.run.scheduler``) receives this table and imports no step;
the steps import the scheduler. A new node type adds its step here.
"""

from __future__ import annotations

from keiri_agent.plans.dsl.models import BlockNode, LoopNode, SubflowNode
from keiri_agent.plans.run.block_step import run_block
from keiri_agent.plans.run.loop_step import run_loop
from keiri_agent.plans.run.scheduler import StepTable
from keiri_agent.plans.run.subflow_step import run_subflow

STEPS: StepTable = {BlockNode: run_block, LoopNode: run_loop, SubflowNode: run_subflow}
