"""The scoring rules of ``benchmarks/research_agent.py`` on hand-made reports and passages.

The benchmark's figures are only as good as its rules: a cited sentence is precise when
≥ 60 % of its key terms occur in its cited passages, and a source supports a question when
document, page and the ``contains`` fragment (whitespace and width aside) match.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from keiri_agent.agents.research.models import DocSnippet

BENCHMARK = Path(__file__).resolve().parents[2] / "benchmarks" / "research_agent.py"


def benchmark() -> ModuleType:
    spec = importlib.util.spec_from_file_location("research_agent_benchmark", BENCHMARK)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


REPORT = (
    "## 結論\n\n"
    "- 消費税額の端数は税率ごとに1回切り捨てます [1]。\n"
    "- 請求書の控えは7年間保存します [2]。\n"
    "- 登録番号は当社名の直下に書きます。\n\n"
    "## 調査の限界\n\n- 「旧版」では該当する資料が見つかりませんでした [1]。\n\n"
    "## 出典\n\n- [1] accounting_regulations.md\n- [2] invoice_style_guide.pdf p.7\n"
)


def test_only_body_sentences_with_markers_are_scored() -> None:
    sentences = benchmark().cited_sentences(REPORT)
    assert [numbers for _sentence, numbers in sentences] == [[1], [2]]
    assert "切り捨て" in sentences[0][0] and "7年間" in sentences[1][0]


def test_a_passage_contains_the_key_terms_at_sixty_percent() -> None:
    module = benchmark()
    terms = ["消費", "端数", "税率", "切り捨てる", "請求"]
    # 3 of 5 occur (60 %): contained; 2 of 5: not
    assert module.contains_terms("消費税の端数は税率で決める。", terms)
    assert not module.contains_terms("消費税の端数。", terms)


def test_key_terms_drop_markers_particles_and_request_words() -> None:
    terms = benchmark().key_terms("請求書の控えを教えてください [2]。")
    assert "2" not in terms and "の" not in terms and "教える" not in terms
    assert "控え" in terms


def test_support_needs_document_page_and_fragment() -> None:
    module = benchmark()
    source = DocSnippet(
        ref="guide#7",
        text="5.1 保存期間\n発行した請求書の控えは、\n7年間保存します。",
        title="ガイド",
        document="invoice_style_guide.pdf",
        page=7,
    )
    support = {
        "document": "invoice_style_guide.pdf",
        "page": 7,
        "contains": "発行した請求書の控えは、7年間保存します",
    }
    assert module.supports(source, support)
    assert not module.supports(source, {**support, "page": 6})
    assert not module.supports(source, {**support, "document": "accounting_regulations.md"})
    assert not module.supports(source, {**support, "contains": "10年間保存します"})
    assert module.supports(source, {**support, "page": None})
