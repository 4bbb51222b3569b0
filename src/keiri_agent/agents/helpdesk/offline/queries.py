"""The offline search queries: key terms, then synonyms and what the advice says is missing.

:func:`reformulate` builds an attempt's query; :func:`missing_from_advice` reads back
the 「不足: A, B。」 that the offline reflection writes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from keiri_agent.agents.helpdesk.offline.asks import asked_counters
from keiri_agent.agents.helpdesk.offline.terms import (
    DEFAULT_VOCABULARY,
    Vocabulary,
    key_terms,
    require_text,
    synonyms,
)
from keiri_agent.search.tokenize import normalize_for_search

_MISSING = re.compile(r"(?:不足|missing)\s*[:：]\s*([^。\n]*)", re.IGNORECASE)


def missing_from_advice(advice: str) -> list[str]:
    """The terms an advice names as missing: ``"不足: ロック, 解除。…"`` → ["ロック", "解除"].

    Without a 「不足:」 marker, terms in 「」 are taken.
    """
    if not advice:
        return []
    found = _MISSING.search(advice)
    raw = re.split(r"[,、，/]", found.group(1)) if found else re.findall(r"「([^」]+)」", advice)
    out: list[str] = []
    for item in raw:
        term = normalize_for_search(item).strip(" 「」\"'")
        if term and term not in out:
            out.append(term)
    return out


def _with_synonyms(terms: Iterable[str], vocabulary: Vocabulary) -> list[str]:
    out: list[str] = []
    for term in terms:
        for word in (term, *synonyms(term, vocabulary)):
            if word not in out:
                out.append(word)
    return out


def reformulate(
    subtask: str, attempt: int, advice: str, vocabulary: Vocabulary = DEFAULT_VOCABULARY
) -> str:
    """The search query for ``attempt`` (0-based) of a part.

    * attempt 0: the part's key terms, space-separated. The original text is *not*
      added: the index tokenizes a query the same way, so it would only add the
      stop terms (「方法」「教える」) that match unrelated passages.
    * attempt 1: key terms, the terms the advice names as missing (「不足: …」),
      and the synonyms (``vocabulary``'s groups) of all of them.
    * attempt 2 and later: only the missing terms and their synonyms; when the
      advice names none, as attempt 1.

    Never empty: with no usable term the part's own text is the query.

    >>> reformulate("パスワードの条件を教えて", 0, "")
    'パスワード 条件'

    Raises:
        ValueError: blank ``subtask`` or negative ``attempt``.
    """
    text = require_text(subtask, "subtask")
    if attempt < 0:
        raise ValueError(f"attempt must be 0 or more, got {attempt}")
    keys = key_terms(text, vocabulary)
    missing = missing_from_advice(advice)
    if attempt == 0:
        words = [*keys, *asked_counters(text)]  # 「何回」: passages stating 「…回」
    elif attempt >= 2 and missing:
        words = _with_synonyms(missing, vocabulary)
    else:
        words = _with_synonyms([*keys, *(m for m in missing if m not in keys)], vocabulary)
    query = " ".join(dict.fromkeys(w for w in words if w.strip()))
    return query or text
