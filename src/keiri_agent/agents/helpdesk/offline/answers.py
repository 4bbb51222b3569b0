"""The offline answers: quoted passages with citations, the reflection, the final answer.

Passages are judged on the part's *topic terms* (``specificity.topic_terms``: its key
terms without the generic ones such as 「設定」「データ」): a passage that shares only
generic words with the part is not about it and is never quoted. One rule decides both
the answer and the reflection, so a part is presented as answered exactly when the
reflection accepts it:

* **answered** — the part's most specific noun is named by a passage, and the best
  passage alone (a mix of passages each saying part of it is no answer) covers the part's
  key terms — all
  of them, or ≥ 2/3 (rounded up) when there are 3 or more; a generic term counts here
  only beside a topic term — and at least half of its topic terms: a lead sentence (the
  most relevant quoted sentence, shortened) and the quotes with their citations; the
  reflection is done. In coverage a verb, adjective or adverb weighs half a noun
  (``VERB_WEIGHT``): it is said in many ways (「しくじる」 for 「間違える」); an action the
  part asks to do is also checked on its own (:func:`_asked_action`). An English part
  follows the same rule, its words matched through the English ↔ Japanese groups of
  ``terms``; the noun its interrogative asks for (「Which printer *model*」:
  ``asks.asked_noun_en``) must be named by the passage.
* **not about its topic** — no passage names the part's most specific noun unit
  (``specificity.most_specific``: 「有給休暇」 in 「有給休暇の申請」): 「資料には記載が
  ありません（「有給休暇」についての記述は見つかりませんでした）」, then — unquoted — where
  its other topic terms occur; the reflection names the noun.
* **related** — they cover some topic terms but not enough: 「資料には記載がありません
  （「上限」についての記述は見つかりませんでした）」, then — unquoted — where the terms it
  does contain occur; the reflection asks for the missing terms.
* **not close in meaning** (embeddings configured) — the words are covered, but no such
  passage is among the closest in meaning to the part (``SIMILARITY_MARGIN``): declined
  (「直接の記述は見つかりませんでした」), pointed to, unquoted.
* **not in the documents** — no passage contains a topic term (or nothing was found):
  「資料には記載がありません」 with the terms searched and the tools used, no quote.

An answered part whose quotes are all from the manual or the FAQ also quotes the release-note
sentence (:func:`is_change_note`) that names two of its topic nouns, the quoted section's
subject and a value (:func:`_newer_statement`): a value a later release changed is never
given alone as current.

:func:`final_answer` is Markdown: the offline label line, the question once, each part's
answer (under a short label of the part when there are several), the sources, and the
parts that were not answered.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from keiri_agent.agents.helpdesk.models import ReflectionResult, SearchOutput, Subtask
from keiri_agent.agents.helpdesk.offline.asks import asked_noun_en, asked_value
from keiri_agent.agents.helpdesk.offline.quotes import (
    answer_lead,
    is_rule_line,
    lead_sentence,
    table_cells,
    table_lead,
    trim,
)
from keiri_agent.agents.helpdesk.offline.specificity import (
    Aspect,
    aspects,
    is_action,
    is_generic,
    is_nominal,
    is_value,
    most_specific,
    spelled,
    states_like,
    topic_terms,
    units,
    weight,
)
from keiri_agent.agents.helpdesk.offline.split import asks, sentences
from keiri_agent.agents.helpdesk.offline.terms import (
    DEFAULT_VOCABULARY,
    PreparedText,
    Vocabulary,
    atomic_terms,
    key_terms,
    require_text,
)
from keiri_agent.agents.helpdesk.wording import JAPANESE, wording_for
from keiri_agent.search.similarity import Similarity
from keiri_agent.search.tokenize import normalize_for_search

OFFLINE_LABEL = JAPANESE.offline_label
MAX_QUOTES = 3
MAX_LABEL_CHARS = 40
SUPPORT_SHARE = 0.9
"""A second passage is quoted only when its relevance reaches this share of the best one's."""
SIMILARITY_MARGIN = 0.04
"""With embeddings configured, a passage is quoted only when its similarity to the part is
at most this much below the best similarity among the passages found for the part: the
embeddings see a clearly closer passage, so this one is about something else. Relative,
because a model's absolute similarities are compressed and differ by question
(multilingual-e5-small: 0.80–0.93 for relevant and unrelated passages alike). Calibrated on
the sample sets only (xyz, keihi and their development sets): at 0.04 the quoted passages
about something else fall by about a quarter, the relevant ones by 3 of 129 (figures and
the blind set's in docs/benchmarks.md)."""
MAX_POINTERS = 2
"""How many places a declined part points to (where the part's words occur, unquoted)."""
RESTATES_DICE = 0.6
"""Character-pair Dice similarity from which an FAQ question restates the part."""
_FAQ_QUESTION = re.compile(r"\AQ[:：]\s*(.+)")
_NOT_LETTERS = re.compile(r"[\W_]+")


@dataclass(frozen=True)
class _Candidate:
    result: SearchOutput
    order: int
    covered: frozenset[str]
    in_heading: frozenset[str]
    """Key terms named by the passage's heading: the section is about them."""
    relevance: float
    """The weights (``specificity.weight``) of the key terms it covers."""
    restates: bool = False
    """An FAQ row whose question says what the part asks (:func:`_restates`)."""
    asks_about: bool = True
    """An FAQ row whose question (its 「Q:」 line) names one of the part's topic terms: the
    entry is about the part, not only its answer's wording."""
    whole: int = 0
    """How many of the part's compound nouns (「代理承認者」) the passage writes as such, not
    in parts (「代理申請者」 … 「承認」)."""
    close: bool = True
    """Among the passages closest in meaning to the part (``SIMILARITY_MARGIN``); always
    true without embeddings."""

    @property
    def is_section(self) -> bool:
        """The heading names every key term the passage covers (at least one)."""
        return bool(self.in_heading) and self.in_heading >= self.covered


@dataclass(frozen=True)
class _Verdict:
    """What the passages say about a part: the quotes to show and whether they answer it."""

    terms: list[str]
    topics: list[str]
    chosen: list[_Candidate]
    covered: list[str]
    """The topic terms the chosen passages contain, in the part's order."""
    absent: str = ""
    """The part's most specific noun (``specificity.most_specific``) when no passage names
    it: the documents do not speak of what the part is about."""
    one_passage: bool = True
    """A HelpDesk part is answered by one passage (its best) covering it; a research query
    (``support(..., one_passage=False)``) gathers what several passages say."""
    framing: tuple[str, ...] = ()
    """The nouns of the situation the part tells before asking (:func:`_question_and_situation`):
    they pick the passages that fit and where a quote is cut, never the answer itself."""

    @property
    def answered(self) -> bool:
        """The module's rule: its most specific noun found, enough key terms in the best
        passage (a verb weighing ``VERB_WEIGHT``), at least half of the topic nouns, and
        (with embeddings)
        a supporting passage among the closest in meaning."""
        if not self.chosen or self.absent:
            return False
        every = (
            set(self.chosen[0].covered)  # one passage answers the part, not a mix
            if self.one_passage
            else {t for c in self.chosen for t in c.covered}
        )
        topics = [t for t in self.topics if is_nominal(t)] or self.topics
        enough = _accepts(self.terms, every) and 2 * len(set(self.covered) & set(topics)) >= len(
            topics
        )
        return enough and bool(self.supporting())

    @property
    def off_meaning(self) -> bool:
        """The words are covered, but no supporting passage is close in meaning."""
        return bool(self.chosen) and not self.absent and not self.supporting()

    def supporting(self) -> list[_Candidate]:
        """The chosen passages that each support the answer on their own: the best one,
        and any other that covers at least ``SUPPORT_SHARE`` of its relevance (and, for a
        HelpDesk part, every key term the best one covers). A passage
        sharing one word with the part is not quoted beside the one that answers it, nor
        another section of the same document whose heading is less about the part
        (:func:`_sibling_section`), nor an FAQ row whose question names none of the part's
        topic nouns; with embeddings, nor one that is not among the closest in meaning."""
        if not self.chosen:
            return []
        first = self.chosen[0]
        return [
            c
            for c in self.chosen
            if c.relevance >= SUPPORT_SHARE * first.relevance
            and c.close
            and (c is first or not _sibling_section(c, first))
            and (c is first or c.result.row is None or c.asks_about or c.restates)
            and (c is first or not self.one_passage or set(c.covered) >= set(first.covered))
        ]

    @property
    def missing(self) -> list[str]:
        return [t for t in self.topics if t not in self.covered]


def _sibling_section(other: _Candidate, first: _Candidate) -> bool:
    """``other`` is another section of ``first``'s document whose heading names fewer of
    the part's terms: the document's own structure says ``first`` is the section about it."""
    return (
        other.result.row is None
        and first.result.row is None
        and other.result.file_name == first.result.file_name
        and len(other.in_heading) < len(first.in_heading)
    )


def _judge(
    subtask: str,
    results: Sequence[SearchOutput],
    vocabulary: Vocabulary,
    similarity: Similarity | None = None,
    *,
    asked: bool = True,
    one_passage: bool = True,
) -> _Verdict:
    """The passages to quote (up to ``MAX_QUOTES``, each with ≥ 1 topic term) and coverage.

    A part without key terms cannot be judged: its best-scored passage is quoted.
    Passages are deduplicated by (file, page, heading, row) and by text; they rank by
    the weight of the key terms they cover (cross-reference sentences aside:
    :func:`_without_references`), then by how many of the part's compound nouns they
    write whole, then an FAQ row whose question restates the part (:func:`_restates`),
    then by how many the heading names (the section about the topic), then the higher
    score, then the earlier result. With ``similarity``, each is
    also marked close or not in meaning (:func:`_close_in_meaning`).
    """
    question, situation = _question_and_situation(subtask) if asked else (subtask, "")
    terms = atomic_terms(key_terms(question, vocabulary))
    topics = topic_terms(terms)
    framing = [
        t
        for t in (topic_terms(key_terms(situation, vocabulary)) if situation else [])
        if t not in terms and is_nominal(t) and not is_value(t)
    ]
    compounds = [spelled(unit) for unit in units(question, terms) if len(unit) >= 2]
    seen: set[tuple[object, ...]] = set()
    candidates: list[_Candidate] = []
    defining = bool(_ASKS_MEANING.search(subtask))
    for order, result in enumerate(results):
        if not defining and _is_glossary(result):
            continue  # a glossary defines words; it answers only a question about a meaning
        key = (result.file_name, result.page, result.heading, result.row)
        text_key = ("text", re.sub(r"\s+", "", result.content))
        if key in seen or text_key in seen:
            continue
        seen.update({key, text_key})
        own = _without_references(result.content)
        prepared = PreparedText.of(own, vocabulary)
        heading = PreparedText.of(result.heading or "", vocabulary)
        in_heading = frozenset(t for t in terms if heading.has(t))
        covered = (
            frozenset(t for t in terms if prepared.has(t) or states_like(t, result.content))
            | in_heading
        )
        if topics and not covered & set(topics):
            continue  # shares no topic term (or only generic ones): not about the part
        relevance = sum(weight(t) for t in covered)
        restates = _restates(subtask, result)
        whole = sum(1 for unit in compounds if unit in normalize_for_search(own))
        asks_about = True
        if result.row is not None and (found := _FAQ_QUESTION.match(result.content.strip())):
            asked_line = PreparedText.of(found.group(1).splitlines()[0], vocabulary)
            asks_about = any(asked_line.has(t) for t in topics if is_nominal(t))
        candidates.append(
            _Candidate(result, order, covered, in_heading, relevance, restates, asks_about, whole)
        )
    if similarity is not None and candidates:
        close = _close_in_meaning(subtask, results, similarity)
        candidates = [replace(c, close=c.result.content in close) for c in candidates]
    if framing:  # the passages about the user's situation, when some are
        fitting = [c for c in candidates if _names_any(c.result, framing, vocabulary)]
        candidates = fitting or candidates
    wanted = asked_value(question) if asked else None
    unstated = ""  # 「何回」: only a passage stating a count answers it
    if wanted is not None and candidates:
        stating = [c for c in candidates if wanted.stated_in(c.result.content)]
        candidates, unstated = (stating, "") if stating else (candidates, wanted.name)
    # "Which printer model…?": only a passage naming a model answers it
    noun = asked_noun_en(question) if asked and all(t.isascii() for t in terms) else ""
    if noun in terms and candidates:
        naming = [c for c in candidates if noun in c.covered]
        candidates, unstated = (naming, unstated) if naming else (candidates, unstated or noun)
    # 「15MBあるんですが」: only a passage stating a size (「上限は10MB」) speaks of it
    for given in (t for t in terms if asked and is_value(t) and not t.isdigit()):
        stating = [c for c in candidates if states_like(given, c.result.content)]
        candidates, unstated = (stating, unstated) if stating else (candidates, unstated or given)
    chosen = sorted(
        candidates,
        key=lambda c: (
            -c.relevance,
            -c.whole,
            -c.restates,
            -len(c.in_heading),
            -c.result.score,
            c.order,
        ),
    )[: MAX_QUOTES if terms else 1]
    covered_topics = [t for t in topics if any(t in c.covered for c in chosen)]
    return _Verdict(
        terms,
        topics,
        chosen,
        covered_topics,
        (_absent(question, terms, results, vocabulary) if asked else "") or unstated,
        one_passage,
        tuple(framing),
    )


_REFERENCE = re.compile(r"参照|ご覧ください|をご確認ください|を見てください|\bsee\b", re.I)
"""A sentence sending the reader elsewhere (「…については「4.3 代理承認」を参照」)."""


_GLOSSARY_HEADING = re.compile(
    r"(?:用語(?:集|一覧|の(?:説明|定義))?|glossary|definitions?)\s*$", re.IGNORECASE
)
"""A heading that ends in 用語 / 用語集 / Glossary (「1.3 主な用語」), not 「用語の登録方法」."""
_ASKS_MEANING = re.compile(
    r"とは|意味|って何|ってなに|の定義|what\s+(?:is|are|does)\b.*\b(?:mean|stand)|definition",
    re.IGNORECASE,
)


def _is_glossary(result: SearchOutput) -> bool:
    """The passage is a glossary section (its own heading names 用語 / Glossary)."""
    last = (result.heading or "").split(" > ")[-1]
    return result.row is None and bool(_GLOSSARY_HEADING.search(last))


def _without_references(text: str) -> str:
    """``text`` without its cross-reference sentences: naming a topic to send the reader to
    another section does not speak of it."""
    return "".join(s for s in PASSAGE_SENTENCE.split(text) if not _REFERENCE.search(s))


def _question_and_situation(part: str) -> tuple[str, str]:
    """The sentences of ``part`` that ask, and those before them that tell the situation
    (「40万円のPCを購入する予定です。相見積もりは何社必要ですか？」: split.asks). The
    question's words decide the answer; the situation picks among passages that fit.
    """
    every = sentences(part)
    asking = [s for s in every if asks(s)]
    told = [s for s in every if not asks(s)]
    if not asking:
        return part, ""
    questions: list[str] = []
    for sentence in asking:  # 「講師に講演料を払うとき、源泉徴収の税率は？」
        clause = _SITUATION_CLAUSE.match(sentence)
        if clause and key_terms(sentence[clause.end() :]):
            told.append(clause.group())
            questions.append(sentence[clause.end() :])
        else:
            questions.append(sentence)
    return (" ".join(questions), " ".join(told)) if told else (part, "")


_SITUATION_CLAUSE = re.compile(r"^.+?(?:とき|時|場合|際)(?:は|に|には|でも)?[、,]\s*")
"""A clause opening a question with the situation it is asked in (「…を払うとき、」)."""


def _names_any(result: SearchOutput, terms: Sequence[str], vocabulary: Vocabulary) -> bool:
    text = PreparedText.of(f"{result.heading or ''}\n{result.content}", vocabulary)
    return any(text.has(term) for term in terms)


def _close_in_meaning(
    subtask: str, results: Sequence[SearchOutput], similarity: Similarity
) -> set[str]:
    """The texts of the results within ``SIMILARITY_MARGIN`` of the best similarity."""
    texts = list(dict.fromkeys(result.content for result in results))
    scores = similarity(subtask, texts)
    best = max(scores)
    return {
        text for text, score in zip(texts, scores, strict=True) if score >= best - SIMILARITY_MARGIN
    }


def _pairs(text: str) -> set[str]:
    letters = _NOT_LETTERS.sub("", normalize_for_search(text))
    return {letters[i : i + 2] for i in range(len(letters) - 1)}


def _restates(subtask: str, result: SearchOutput) -> bool:
    """The result is an FAQ row whose question (its 「Q:」 line) says what ``subtask`` asks:
    their character pairs' Dice similarity is at least ``RESTATES_DICE``
    (「パスワードを忘れました」 and 「Q: パスワードを忘れてしまいました。」: 0.75)."""
    if result.row is None:
        return False
    found = _FAQ_QUESTION.match(result.content.strip())
    if found is None:
        return False
    asked, written = _pairs(subtask), _pairs(found.group(1).splitlines()[0])
    if not asked or not written:
        return False
    return 2 * len(asked & written) / (len(asked) + len(written)) >= RESTATES_DICE


def _absent(
    subtask: str, terms: Sequence[str], results: Sequence[SearchOutput], vocabulary: Vocabulary
) -> str:
    """What the passages do not speak of, else "": the part's most specific noun unit when
    no passage names it (with several equally specific units, only when none is named);
    else an aspect of the named topic (``specificity.aspects``) that no passage names — a
    tied aspect named beside the topic (same sentence, or the sentence's heading), a redo
    (「再発行」) as such."""
    best = most_specific(subtask, terms)
    if not best:
        return ""
    contexts = [pair for r in results for pair in _contexts(r)]
    named = [
        unit
        for unit in best
        if any(names(h, unit, vocabulary) or names(s, unit, vocabulary) for h, s in contexts)
    ]
    if not named:
        return spelled(best[0])
    action = _asked_action(subtask, terms)
    if action and not any(
        PreparedText.of(h, vocabulary).has(action) or PreparedText.of(s, vocabulary).has(action)
        for h, s in contexts
        if (h or s).strip()
    ):
        return action
    missing = ""
    for unit in named:
        missing = _unnamed_aspect(subtask, terms, unit, contexts, vocabulary)
        if not missing:
            return ""
    return missing


def _contexts(result: SearchOutput) -> list[tuple[str, str]]:
    """(heading, sentence) of every sentence of the passage, and (heading, "") for the
    heading alone. A table row is read under its header row as well as its heading: in
    「項目 / スタンダード / プロ」 over 「月額料金 / 33,000円 / 88,000円」, the row names the
    monthly fee *of the Standard plan*."""
    heading = result.heading or ""
    out: list[tuple[str, str]] = []
    header = ""
    for sentence in [*PASSAGE_SENTENCE.split(result.content), ""]:
        if not (sentence.strip() or heading):
            continue
        cells = table_cells(sentence)  # a DOCX table's tab cells or a Markdown row
        if cells:
            if not header:
                header = sentence
            elif not is_rule_line(cells):
                out.append((f"{heading}\n{header}", sentence))
                continue
        else:
            header = ""  # any other line, a blank one too, ends the table
        out.append((heading, sentence))
    return out


_DONE = re.compile(r"(?:する|し|でき|させ|され|を行|の(?:方法|手順|仕方)|方法|手順)")
"""What follows a verbal noun the question asks to do (「購入できますか」「追加してもらう」
「編集の方法」), unlike one it lists (「パスワードとロックと通知」)."""


def _asked_action(subtask: str, terms: Sequence[str]) -> str:
    """The action the part asks to do: its last non-generic verbal noun written as a
    predicate (「購入できますか」「追加したい」), "" when it has none."""
    text = normalize_for_search(subtask)
    for term in reversed(terms):
        if is_generic(term) or not is_action((term,)):
            continue
        if re.search(re.escape(term) + _DONE.pattern, text):
            return term
    return ""


def _unnamed_aspect(
    subtask: str,
    terms: Sequence[str],
    topic: tuple[str, ...],
    contexts: Sequence[tuple[str, str]],
    vocabulary: Vocabulary,
) -> str:
    """The first aspect of ``topic`` in ``subtask`` that no (heading, sentence) names as
    :func:`_absent` requires, written as the question says it; "" when all are named."""
    for aspect in aspects(subtask, terms, topic):

        def says(text: str, aspect: Aspect = aspect) -> bool:
            if aspect.form:
                return bool(text.strip()) and PreparedText.of(text, vocabulary).has(aspect.form)
            return names(text, aspect.unit, vocabulary)

        if not any(
            (says(h) or says(s))
            and (not aspect.linked or names(h, topic, vocabulary) or names(s, topic, vocabulary))
            for h, s in contexts
        ):
            return aspect.form or spelled(aspect.unit)
    return ""


PASSAGE_SENTENCE = re.compile(r"(?<=[。．！？!?])|\n")


def names(sentence: str, unit: Sequence[str], vocabulary: Vocabulary) -> bool:
    """The sentence names the noun unit: its parts (or their synonyms) all in one sentence.

    Parts scattered over a passage (「申請」 here, 「フォーマット」 three sentences on) do not
    name 「申請フォーマット」.
    """
    if not sentence.strip():
        return False
    if len(unit) > 1 and spelled(unit) in normalize_for_search(sentence):
        return True
    prepared = PreparedText.of(sentence, vocabulary)
    return all(prepared.has(part) for part in unit)


def _label(subtask: str) -> str:
    return re.sub(r"\s+", " ", subtask.strip())


def _not_in_documents(text: str, terms: Sequence[str], tools: Sequence[str]) -> str:
    wording = wording_for(text)
    searched = wording.separator.join(terms) if terms else _label(text)
    where = wording.searched_with.format(tools=wording.separator.join(tools)) if tools else ""
    return wording.not_in_documents.format(label=_label(text), searched=searched, where=where)


def subtask_answer(
    subtask: str,
    results: list[SearchOutput],
    vocabulary: Vocabulary = DEFAULT_VOCABULARY,
    *,
    tools: Sequence[str] = (),
    similarity: Similarity | None = None,
) -> tuple[str, list[str]]:
    """The part's answer (Japanese) and the citations it uses, in order.

    Answered: a lead sentence, then 1–3 quotes each followed by 【citation】; related:
    「資料には記載がありません」 naming what is missing and pointing (unquoted) to where the
    part's other words occur; not in the documents: 「資料には記載がありません」
    with the terms searched and ``tools`` (the search tools used), and no citation.
    ``similarity`` (embeddings configured): see ``SIMILARITY_MARGIN``.
    """
    text = require_text(subtask, "subtask")
    verdict = _judge(text, results, vocabulary, similarity)
    if not verdict.answered:
        return _declined(text, verdict, tools), []
    quotes: list[str] = []
    citations: list[str] = []
    items: list[str] = []
    words = [*verdict.terms, *verdict.framing]  # where quotes are cut
    for candidate in verdict.supporting():
        # an FAQ row (Q + A) is quoted whole: its answer is the point
        whole = candidate.is_section or candidate.result.row is not None
        quote = trim(candidate.result.content, words, vocabulary, section=whole)
        citation = candidate.result.citation(quote)
        quotes.append(quote)
        # a quote of several lines stays one list item: hard breaks, indented
        items.append("- " + quote.replace("\n", "  \n  ") + f"【{citation}】")
        if citation not in citations:
            citations.append(citation)
    newer = _newer_statement(verdict, results, vocabulary, quoted=verdict.supporting())
    if newer is not None:
        result, quote = newer
        citation = result.citation(quote)
        items.append("- " + quote.replace("\n", "  \n  ") + f"【{citation}】")
        if citation not in citations:
            citations.append(citation)
    # an FAQ row asking what the part asks is answered by its own answer
    restated = answer_lead(quotes[0]) if verdict.chosen[0].restates else ""
    lead = (
        restated
        or table_lead(verdict.chosen[0].result.content, words, vocabulary)
        or lead_sentence(quotes, words, vocabulary, asked_value(text))
    )
    wording = wording_for(text)
    first = (
        wording.according.format(lead=lead)
        if lead
        else wording.found_passages.format(label=_label(text))
    )
    return "\n".join([first, *items]), citations


_CHANGE_NOTES_FILE = re.compile(
    r"release|change.?log|what.?s.?new|リリース|更新履歴|改訂履歴|変更履歴", re.IGNORECASE
)
_VERSION_HEADING = re.compile(r"(?:\bver\.?|\bv)\s?\d+(?:\.\d+)+|\d{4}年\d{1,2}月\d{1,2}日", re.I)


def is_change_note(result: SearchOutput) -> bool:
    """The passage is from release notes or a change log (its file's name says so, or its
    heading names a version or a date): it states what changed after the manual."""
    if result.row is not None:
        return False
    return bool(
        _CHANGE_NOTES_FILE.search(result.file_name) or _VERSION_HEADING.search(result.heading or "")
    )


def _newer_statement(
    verdict: _Verdict,
    results: Sequence[SearchOutput],
    vocabulary: Vocabulary,
    *,
    quoted: Sequence[_Candidate],
) -> tuple[SearchOutput, str] | None:
    """A release-note sentence that changes what the quoted manual says, when no quote is
    from release notes: it names at least two of the part's topic nouns (all, when the
    part has fewer) and is quoted beside the manual's, so a value the manual states is
    never given as current when a later release changed it. None when there is none."""
    if not quoted or any(is_change_note(c.result) for c in quoted):
        return None
    nouns = [t for t in verdict.topics if is_nominal(t) and not is_value(t)]
    need = min(2, len(nouns))
    if need == 0:
        return None
    section = PreparedText.of(quoted[0].result.heading or "", vocabulary).terms
    best: tuple[int, int, SearchOutput, str] | None = None
    for order, result in enumerate(results):
        if not is_change_note(result):
            continue
        for sentence in PASSAGE_SENTENCE.split(result.content):
            text = sentence.strip().lstrip("-*・ ").strip()
            if not text:
                continue
            prepared = PreparedText.of(text, vocabulary)
            named = sum(1 for t in nouns if prepared.has(t))
            about = not section or any(prepared.has(t) for t in section if is_nominal(t))
            changed = re.search(r"\d", text) is not None  # a value the release changed
            if named >= need and about and changed and (best is None or named > best[0]):
                best = (named, order, result, text)
    return (best[2], best[3]) if best else None


def _declined(text: str, verdict: _Verdict, tools: Sequence[str]) -> str:
    """A part the passages do not answer: 「資料には記載がありません」, what is missing, and
    — unquoted, so nothing is presented as the answer — where the part's other words
    occur, for a reader who wants to look."""
    if not verdict.chosen:
        return _not_in_documents(text, verdict.terms, tools)
    wording = wording_for(text)
    missing = [verdict.absent] if verdict.absent else verdict.missing
    why = wording.absent.format(terms=wording.quoted(missing)) if missing else wording.no_direct
    places = list(dict.fromkeys(c.result.citation() for c in verdict.chosen))[:MAX_POINTERS]
    words = wording.quoted(verdict.covered)
    pointer = (
        wording.words_occur.format(words=words) + wording.places_separator.join(places)
        if words and places
        else ""
    )
    return wording.declined.format(label=_label(text), why=why) + pointer


VERB_WEIGHT = 0.5
"""A verb, adjective or adverb of a part weighs half a noun in coverage: it is said in many
ways (「しくじる」 for 「間違える」), but the action asked still counts (measured: nouns only
answered more questions on the development sets and more unanswerable ones on the blind)."""


def _accepts(terms: Sequence[str], covered: set[str]) -> bool:
    """All key terms covered, or ≥ 2/3 of their weight when there are ≥ 3 (a noun weighs
    1, any other term ``VERB_WEIGHT``)."""
    weights = {t: 1.0 if is_nominal(t) else VERB_WEIGHT for t in terms}
    total = sum(weights.values())
    got = sum(w for t, w in weights.items() if t in covered)
    if len(terms) >= 3:
        return got >= 2 * total / 3 - 1e-9
    return got >= total - 1e-9


def reflect(
    subtask: str,
    results: list[SearchOutput],
    attempt: int,
    vocabulary: Vocabulary = DEFAULT_VOCABULARY,
    *,
    similarity: Similarity | None = None,
) -> ReflectionResult:
    """Is the part answered? Judged on the passages :func:`subtask_answer` quotes.

    Rule (the module's): the quoted passages (with synonyms) must contain every key term
    of the part, or ≥ 2/3 of them (rounded up: 3 of 4, 2 of 3) when it has 3 or more,
    and at least half of its topic terms; a passage that shares only generic terms is
    not quoted and counts for nothing. A part with no key terms is done when anything
    was found. No results is never done. The advice names the missing topic terms as
    ``"不足: A, B。"`` (parsed back by ``reformulate``) and a next step that depends on
    ``attempt`` (0-based).

    Raises:
        ValueError: blank ``subtask`` or negative ``attempt``.
    """
    text = require_text(subtask, "subtask")
    if attempt < 0:
        raise ValueError(f"attempt must be 0 or more, got {attempt}")
    verdict = _judge(text, results, vocabulary, similarity)
    if verdict.answered:
        return ReflectionResult(advice="", is_completed=True)
    missing = verdict.missing
    if verdict.absent and verdict.absent not in missing:
        missing = [verdict.absent, *missing]
    lead = "検索結果がありませんでした。" if not results else ""
    named = f"不足: {', '.join(missing)}。" if missing else ""
    if attempt == 0:
        step = "同義語を加えて、マニュアル検索とFAQ検索の両方で検索し直してください。"
    elif attempt == 1:
        step = "不足している語だけに絞り、もう一方のツールでも検索してください。"
    else:
        step = "資料に記載がない可能性があります。見つからなかった点として回答してください。"
    return ReflectionResult(advice=lead + named + step, is_completed=False)


# --------------------------------------------------------------------------- final answer

_CITED = re.compile(r"【([^】]+)】")
_REQUEST_TAIL = re.compile(
    r"(?:について|に関して|に関する|って)?(?:を|は|が|も)?"
    r"(?:教え|知り|聞き|伺い|確認し|説明し|お願い)[^、。？?]*[。？?！!]*$"
)
"""The request that ends a part (「…を教えてください」「…について知りたいです」)."""


def _short_label(task: str) -> str:
    """A part's heading: its text without the closing request, at most ``MAX_LABEL_CHARS``.

    >>> _short_label("パスワードの有効期限を教えてください")
    'パスワードの有効期限'
    """
    label = _label(task)
    short = _REQUEST_TAIL.sub("", label).strip() or label
    short = re.sub(r"^(?:please|could you|can you)\s+", "", short, flags=re.IGNORECASE) or short
    if len(short) > MAX_LABEL_CHARS:
        short = short[: MAX_LABEL_CHARS - 1] + "…"
    return short


def final_answer(question: str, subtasks: list[Subtask]) -> str:
    """The final answer in Markdown, built from the parts' answers.

    Layout: the offline label line, the question (once), each part's answer — under a
    ``###`` heading with the part's short label (:func:`_short_label`) when there are
    several parts, with no heading for a single part — a 「出典」 list (distinct citations
    in first-use order: each part's ``sources``, then citations in 【】 of its answer),
    and — when any part is not completed — a 「見つからなかった点」 section naming those
    parts. A completed part is never listed there: its answer and its reflection follow
    one rule (see the module docstring).

    Raises:
        ValueError: blank ``question``.
    """
    text = require_text(question, "question")
    wording = wording_for(text)
    lines = [wording.offline_label, "", wording.question.format(question=_label(text)), ""]
    if not subtasks:
        lines.append(wording.nothing_found)
    sources: list[str] = []
    for number, subtask in enumerate(subtasks, start=1):
        answer = subtask.subtask_answer.strip() or wording.no_answer
        if len(subtasks) > 1:
            lines += [f"### {number}. {_short_label(subtask.task_name)}", ""]
        lines += [answer, ""]
        for citation in [*subtask.sources, *_CITED.findall(subtask.subtask_answer)]:
            if citation not in sources:
                sources.append(citation)
    lines += [wording.sources_heading, ""]
    if sources:
        lines += [f"{n}. {citation}" for n, citation in enumerate(sources, start=1)]
    else:
        lines.append(wording.no_sources)
    open_parts = [s for s in subtasks if not s.is_completed]
    if open_parts:
        lines += ["", wording.not_found_heading, "", wording.not_found_intro, ""]
        lines += [f"- {_short_label(s.task_name)}" for s in open_parts]
    return "\n".join(lines).rstrip() + "\n"


# --------------------------------------------------------------------------- support check


@dataclass(frozen=True)
class Support:
    """Whether passages answer a (sub)question, by the rule of :func:`subtask_answer`.

    The one support check of the offline agents: the HelpDesk quotes ``passages`` only when
    ``answered``, and the research agent summarises and concludes from them alike.
    """

    answered: bool
    passages: list[SearchOutput]
    """The passages that each support the answer (best first); empty when not answered."""
    terms: list[str]
    """The key terms of the question, as the passages were judged on them."""
    missing: list[str]
    """What the passages do not speak of: the absent noun, or the uncovered topic terms."""


def support(
    question: str,
    passages: Sequence[SearchOutput],
    vocabulary: Vocabulary = DEFAULT_VOCABULARY,
    *,
    similarity: Similarity | None = None,
    asked: bool = True,
    one_passage: bool = False,
) -> Support:
    """Judge ``passages`` against ``question`` (see the module docstring's rule; with
    ``similarity``, also ``SIMILARITY_MARGIN``).

    ``asked=False`` judges a statement instead of a question (a model's claim,
    ``claims.py``): its words must be covered, but the question's topic rule (its most
    specific noun and the aspects asked about it, :func:`_absent`) does not apply — a
    claim's own rules name what it must not add. ``one_passage`` asks the HelpDesk's rule
    (the best passage alone covers the question); by default a research query's key terms
    may be covered by the passages together."""
    verdict = _judge(
        require_text(question, "question"),
        passages,
        vocabulary,
        similarity,
        asked=asked,
        one_passage=one_passage,
    )
    missing = [verdict.absent] if verdict.absent else verdict.missing
    if not verdict.answered:
        return Support(False, [], verdict.terms, missing)
    return Support(True, [c.result for c in verdict.supporting()], verdict.terms, [])
