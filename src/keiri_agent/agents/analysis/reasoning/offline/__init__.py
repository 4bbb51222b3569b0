"""The offline provider's reasoner: rules that plan specs from Japanese/English requests.

``reasoner`` decides; ``planner`` turns a request into specs (one per thing asked
for) using ``parser`` (column matching, splitting), ``request_filters`` (dates, values),
``steps`` (analysis specs) and ``vocab`` (keyword tables).
"""

from keiri_agent.agents.analysis.reasoning.offline.reasoner import OfflineReasoner, repair

__all__ = ["OfflineReasoner", "repair"]
