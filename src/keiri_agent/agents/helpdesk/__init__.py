"""The HelpDesk agent (seed 001): plan, parallel searched subtasks with reflection, answer.

from keiri_agent.agents.helpdesk import HelpDeskAgent, default_tools

agent = HelpDeskAgent(settings, tools=default_tools(manual_index, faq_index))
result = agent.run_agent("パスワードを忘れたときはどうすればいいですか", on_event=print)
print(result.answer)

Modules: ``agent`` (the graph), ``reasoner`` (the decisions' protocol) with
``llm_reasoner`` and ``offline_reasoner`` (over the rules of ``offline/``), ``citations``,
``tools``, ``prompts``, ``models``, ``state``, and ``desk`` (knowledge base + agent).
The names are imported on first use (``lazy_exports``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from keiri_agent.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from keiri_agent.agents.helpdesk.agent import (
        MAX_CHALLENGE_COUNT,
        NO_TOOL_CALL_ADVICE,
        HelpDeskAgent,
    )
    from keiri_agent.agents.helpdesk.models import (
        AgentResult,
        ReflectionResult,
        SearchOutput,
        Subtask,
        SubtaskPlan,
        ToolResult,
    )
    from keiri_agent.agents.helpdesk.prompts import HelpDeskAgentPrompts
    from keiri_agent.agents.helpdesk.reasoner import HelpDeskReasoner
    from keiri_agent.agents.helpdesk.state import AgentState, AgentSubGraphState
    from keiri_agent.agents.helpdesk.tools import SearchTool, default_tools

__all__ = [
    "MAX_CHALLENGE_COUNT",
    "NO_TOOL_CALL_ADVICE",
    "AgentResult",
    "AgentState",
    "AgentSubGraphState",
    "HelpDeskAgent",
    "HelpDeskAgentPrompts",
    "HelpDeskReasoner",
    "ReflectionResult",
    "SearchOutput",
    "SearchTool",
    "Subtask",
    "SubtaskPlan",
    "ToolResult",
    "default_tools",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "MAX_CHALLENGE_COUNT": ".agent",
        "NO_TOOL_CALL_ADVICE": ".agent",
        "HelpDeskAgent": ".agent",
        "AgentResult": ".models",
        "ReflectionResult": ".models",
        "SearchOutput": ".models",
        "Subtask": ".models",
        "SubtaskPlan": ".models",
        "ToolResult": ".models",
        "HelpDeskAgentPrompts": ".prompts",
        "HelpDeskReasoner": ".reasoner",
        "AgentState": ".state",
        "AgentSubGraphState": ".state",
        "SearchTool": ".tools",
        "default_tools": ".tools",
    },
)
