"""The HelpDesk agent (seed 001): plan, parallel searched subtasks with reflection, answer.

from keiri_agent.agents.helpdesk import HelpDeskAgent, default_tools

agent = HelpDeskAgent(settings, tools=default_tools(manual_index, faq_index))
result = agent.run_agent("パスワードを忘れたときはどうすればいいですか", on_event=print)
print(result.answer)
"""

from keiri_agent.agents.helpdesk.agent import (
    MAX_CHALLENGE_COUNT,
    NO_TOOL_CALL_ADVICE,
    EventHandler,
    HelpDeskAgent,
)
from keiri_agent.agents.helpdesk.models import (
    AgentResult,
    Plan,
    ReflectionResult,
    SearchOutput,
    Subtask,
    ToolResult,
)
from keiri_agent.agents.helpdesk.prompts import HelpDeskAgentPrompts
from keiri_agent.agents.helpdesk.state import AgentState, AgentSubGraphState
from keiri_agent.agents.helpdesk.tools import SearchTool, default_tools

__all__ = [
    "MAX_CHALLENGE_COUNT",
    "NO_TOOL_CALL_ADVICE",
    "AgentResult",
    "AgentState",
    "AgentSubGraphState",
    "EventHandler",
    "HelpDeskAgent",
    "HelpDeskAgentPrompts",
    "Plan",
    "ReflectionResult",
    "SearchOutput",
    "SearchTool",
    "Subtask",
    "ToolResult",
    "default_tools",
]
