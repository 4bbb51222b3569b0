"""The HelpDesk agent's offline rules: plan, search terms, answers and reflection without an LLM.

When no LLM is configured (the "offline" provider), ``OfflineReasoner``
(``offline_reasoner.py``) makes the agent's decisions with these deterministic rules
over Japanese and English text:

* ``terms`` — :func:`key_terms` (content words minus question words, generic terms
  (``STOP_TERMS``) and the system name) and :func:`synonyms`, both per
  :class:`Vocabulary` (system name, built-in ``synonyms.txt`` groups plus the knowledge
  base's own, :func:`load_synonym_groups`);
* ``split`` — :func:`split_question`, the plan;
* ``queries`` — :func:`reformulate`, the search query of each attempt;
* ``specificity`` — :func:`topic_terms`: the key terms that say what a part is about
  (generic terms such as 「設定」「データ」 aside) and their weights;
* ``quotes`` — the sentences of a passage quoted for a part, and an answer's lead;
* ``answers`` — :func:`subtask_answer` (quoted passages with citations),
  :func:`reflect` (are the part's topic terms covered?) and :func:`final_answer`.
"""

from keiri_agent.agents.helpdesk.offline.answers import (
    OFFLINE_LABEL,
    final_answer,
    reflect,
    subtask_answer,
)
from keiri_agent.agents.helpdesk.offline.queries import missing_from_advice, reformulate
from keiri_agent.agents.helpdesk.offline.quotes import MAX_QUOTE_CHARS
from keiri_agent.agents.helpdesk.offline.split import MAX_PARTS, split_question
from keiri_agent.agents.helpdesk.offline.terms import (
    DEFAULT_VOCABULARY,
    STOP_TERMS,
    SYNONYM_GROUPS,
    SYNONYMS_FILE,
    Vocabulary,
    key_terms,
    load_synonym_groups,
    synonyms,
)

__all__ = [
    "DEFAULT_VOCABULARY",
    "MAX_PARTS",
    "MAX_QUOTE_CHARS",
    "OFFLINE_LABEL",
    "STOP_TERMS",
    "SYNONYMS_FILE",
    "SYNONYM_GROUPS",
    "Vocabulary",
    "final_answer",
    "key_terms",
    "load_synonym_groups",
    "missing_from_advice",
    "reflect",
    "reformulate",
    "split_question",
    "subtask_answer",
    "synonyms",
]
