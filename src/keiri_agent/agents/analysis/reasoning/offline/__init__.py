"""The offline provider's reasoner: rules that plan specs from Japanese/English requests.

``reasoner`` decides; ``planner`` turns a request into specs (one per thing asked
for) using ``parser`` (column matching, splitting), ``request_filters`` (dates, values,
units), ``steps`` (analysis specs) and ``vocab`` (keyword tables); ``follow_up`` edits
the previous spec. Word tables are data modules: ``column_words``, ``ja_column_words``,
``ja_english_words``, ``en_column_words_ja`` and ``katakana``.
"""

from keiri_agent.agents.analysis.reasoning.offline.reasoner import OfflineReasoner, repair

__all__ = ["OfflineReasoner", "repair"]
