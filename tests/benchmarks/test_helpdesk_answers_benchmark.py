"""The labels of both HelpDesk question sets, and the scoring rules of helpdesk_answers.py.

The labels are what the answer benchmark is measured against, so they are checked against
the committed documents as the product extracts them: every expected page exists and
contains every key phrase (NFKC, whitespace aside). The scoring rules are checked on
hand-made answers.
"""

from __future__ import annotations

import importlib.util
import sys
from functools import cache
from pathlib import Path
from types import ModuleType

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
BENCHMARK = BENCHMARKS / "helpdesk_answers.py"


@cache
def benchmark() -> ModuleType:
    if str(BENCHMARKS) not in sys.path:
        sys.path.insert(0, str(BENCHMARKS))  # its sibling helpdesk_samples.py
    spec = importlib.util.spec_from_file_location("helpdesk_answers_benchmark", BENCHMARK)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@cache
def texts(name: str):  # type: ignore[no-untyped-def]
    bench = benchmark()
    kb = next(kb for kb in bench.KNOWLEDGE_BASES if kb.name == name)
    return bench.SourceTexts.of(kb)


def knowledge_base(name: str):  # type: ignore[no-untyped-def]
    return next(kb for kb in benchmark().KNOWLEDGE_BASES if kb.name == name)


@pytest.mark.parametrize("name", ["xyz", "keihi"])
def test_every_expected_page_exists_and_holds_every_key_phrase(name: str) -> None:
    bench = benchmark()
    questions = bench.load_questions(knowledge_base(name))
    ids = [q["id"] for q in questions]
    assert len(ids) == len(set(ids))
    checked = 0
    for question in questions:
        if not bench.is_answerable(question):
            assert question["expected"] == [], question["id"]
            continue
        assert question["expected"], question["id"]
        for expected in question["expected"]:
            phrases = expected["key_phrases"]
            assert 1 <= len(phrases) <= 4, question["id"]
            cited = texts(name).text(expected["document"], expected["page"])
            assert cited is not None, f"{question['id']}: no {expected['document']} page"
            for phrase in phrases:
                assert bench.squash(phrase) in cited, f"{question['id']}: {phrase}"
                checked += 1
    assert checked > 40


def test_the_second_set_is_large_enough_and_has_unanswerable_questions() -> None:
    bench = benchmark()
    questions = bench.load_questions(knowledge_base("keihi"))
    answerable = [q for q in questions if q["answerable"] is True]
    unanswerable = [q for q in questions if q["answerable"] is False]
    assert len(answerable) >= 40
    assert len(unanswerable) >= 5
    assert all(len(q["expected"][0]["key_phrases"]) >= 1 for q in answerable)
    assert any(q["question"].isascii() for q in answerable)


def test_the_first_set_keeps_its_retrieval_fields() -> None:
    for question in benchmark().load_questions(knowledge_base("xyz")):
        for expected in question["expected"]:
            assert {"document", "contains", "page", "key_phrases"} <= set(expected)


ANSWER = (
    "### 1. 申請期限\n\n"
    "経費の申請期限は次のとおりです。\n"
    "- 経費は、支払日の翌月末までに申請してください。【keihi_manual.pdf p.3 「2. 経費申請"
    " > 2.2 申請期限」】\n"
    "- 1. メニューの「経費申請」から\n  「新規作成」をクリックします。【keihi_manual.pdf p.4"
    " 「3. 領収書」】\n"
    "- Q: 振込先の口座を変えたいです。  \n  A: ケイヒクラウドでは変更できません。"
    "【keihi_faq.csv 行11 「支払」】\n"
    "- 紙の原本を…提出する必要はありません。【keihi_manual.pdf p.4】\n\n"
    "### 出典\n\n1. keihi_manual.pdf p.3 「2. 経費申請 > 2.2 申請期限」\n"
)


def test_quoted_citations_are_parsed_with_their_quote_and_source() -> None:
    citations = benchmark().quoted_citations(ANSWER)
    assert [(c.document, c.page, c.row) for c in citations] == [
        ("keihi_manual.pdf", 3, None),
        ("keihi_manual.pdf", 4, None),
        ("keihi_faq.csv", None, 11),
        ("keihi_manual.pdf", 4, None),
    ]
    assert citations[0].quote == "経費は、支払日の翌月末までに申請してください。"
    assert citations[1].quote.startswith("1. メニューの")


def test_a_citation_is_supported_only_by_the_page_or_row_holding_its_quote() -> None:
    bench = benchmark()
    citations = bench.quoted_citations(ANSWER)
    verdicts = [bench.supported(c, texts("keihi")) for c in citations]
    # the second quote is on page 3, not the cited page 4; the "…" quote is split in two
    assert verdicts == [True, False, True, True]
    score = bench.Score()
    question = {"id": "t1", "answerable": True, "expected": [{"key_phrases": ["翌月末", "60日"]}]}
    score.add(question, ANSWER, texts("keihi"))
    figures = score.figures()
    assert figures["quote_fidelity"] == 0.75
    # relevant: only the first quote holds a key phrase, and no passage is expected by place
    assert figures["citation_precision"] == 0.25
    assert figures["key_phrase_recall"] == 0.5


def test_a_citation_is_relevant_at_an_expected_page_row_or_with_a_key_phrase() -> None:
    bench = benchmark()
    citations = bench.quoted_citations(ANSWER)
    question = {
        "id": "t2",
        "answerable": True,
        "expected": [
            {"document": "keihi_manual.pdf", "page": 4, "key_phrases": ["領収書"]},
            {"document": "keihi_faq.csv", "page": None, "row": 12, "key_phrases": ["振込手数料"]},
        ],
    }
    # p.3 quote: neither the expected page nor a key phrase; p.4 twice: the expected page;
    # FAQ row 11: not the expected row 12
    assert [bench.relevant(c, question) for c in citations] == [False, True, False, True]
    unanswerable = {"id": "u", "answerable": False, "expected": []}
    assert not any(bench.relevant(c, unanswerable) for c in citations)


def test_declines_count_for_unanswerable_and_against_answerable_questions() -> None:
    bench = benchmark()
    score = bench.Score()
    declined = "「監査ログ」について、資料には記載がありません。"
    score.add({"id": "u1", "answerable": False, "expected": []}, declined, texts("keihi"))
    score.add({"id": "u2", "answerable": False, "expected": []}, ANSWER, texts("keihi"))
    score.add(
        {"id": "a1", "answerable": True, "expected": [{"key_phrases": ["翌月末"]}]},
        declined,
        texts("keihi"),
    )
    figures = score.figures()
    assert figures["unanswerable_declined"] == 0.5
    assert figures["answerable_wrongly_declined"] == 1
    assert figures["key_phrase_recall"] == 0.0


def test_retrieval_line_says_n_a_without_a_local_embeddings_server(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    bench = benchmark()
    monkeypatch.setattr(bench, "has_local_embeddings", lambda: False)
    assert bench.retrieval_lines(list(bench.KNOWLEDGE_BASES)) == [
        "retrieval hit@3 keyword/vector/hybrid: n/a (no local embeddings server installed)"
    ]
