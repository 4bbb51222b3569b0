"""The Plan language: models, references, conditions, dependencies, scopes, loading.

Nothing here knows blocks, checks or runs; every other part of ``plans`` builds on it.
"""

from keiri_agent.plans.dsl.loader import (
    check_plan_file,
    check_plan_text,
    load_plan_file,
    load_plan_text,
)
from keiri_agent.plans.dsl.migrate import migrate_plan_text
from keiri_agent.plans.dsl.models import BlockNode, LoopNode, Node, Plan, SubflowNode
from keiri_agent.plans.dsl.references import rewrite_references
from keiri_agent.plans.dsl.scope import PlanVars, build_vars

__all__ = [
    "BlockNode",
    "LoopNode",
    "Node",
    "Plan",
    "PlanVars",
    "SubflowNode",
    "build_vars",
    "check_plan_file",
    "check_plan_text",
    "load_plan_file",
    "load_plan_text",
    "migrate_plan_text",
    "rewrite_references",
]
