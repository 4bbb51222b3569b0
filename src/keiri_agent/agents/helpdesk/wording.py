"""The words of the HelpDesk's own answer text, in the language of the question.

The offline answers and the sections the agent adds (the question, 出典, 見つからなかった点,
a decline, a part given up) are written by the product, not by a model: a question asked in
English is answered in English, one with any Japanese in Japanese (:func:`wording_for`).
Quotes stay as the documents write them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

_JAPANESE = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]")


@dataclass(frozen=True)
class Wording:
    """One language's phrases; ``{}`` fields are filled by the methods."""

    offline_label: str
    question: str
    sources_heading: str
    no_sources: str
    not_found_heading: str
    not_found_intro: str
    nothing_found: str
    no_answer: str
    according: str
    found_passages: str
    declined: str
    absent: str
    no_direct: str
    words_occur: str
    not_in_documents: str
    searched_with: str
    gave_up: str
    for_reference: str
    open_quote: str
    close_quote: str
    separator: str
    places_separator: str

    def quoted(self, terms: Sequence[str]) -> str:
        """``terms`` each in quotes, listed (「A」、「B」 / "A", "B")."""
        return self.separator.join(f"{self.open_quote}{t}{self.close_quote}" for t in terms)


JAPANESE = Wording(
    offline_label="（オフラインモード：LLMを使わず、検索結果の引用で回答しています）",
    question="**ご質問**: {question}",
    sources_heading="### 出典",
    no_sources="該当する資料は見つかりませんでした。",
    not_found_heading="### 見つからなかった点",
    not_found_intro=(
        "次の点は、マニュアル・FAQから十分な記述が見つかりませんでした。"
        "ヘルプデスクにお問い合わせください。"
    ),
    nothing_found="回答できる内容が見つかりませんでした。",
    no_answer="（回答がありません）",
    according="資料によると、{lead}",
    found_passages="「{label}」について、検索で見つかった記述は次のとおりです。",
    declined="「{label}」について、資料には記載がありません（{why}）。",
    absent="{terms}についての記述は見つかりませんでした",
    no_direct="直接の記述は見つかりませんでした",
    words_occur=(
        "\n{words}という語は次の箇所に出てきます（質問に答えているかは確認できませんでした）: "
    ),
    not_in_documents="「{label}」について、資料には記載がありません。検索した語: {searched}{where}",
    searched_with="（{tools} で検索）",
    gave_up="「{label}」について、{attempts}回検索しましたが十分な回答が見つかりませんでした。",
    for_reference="\n\n参考（不完全な回答）:\n",
    open_quote="「",
    close_quote="」",
    separator="、",
    places_separator="／",
)
ENGLISH = Wording(
    offline_label="(Offline mode: answered by quoting the search results, without an LLM)",
    question="**Question**: {question}",
    sources_heading="### Sources",
    no_sources="No matching document was found.",
    not_found_heading="### Not found",
    not_found_intro=(
        "The manuals and the FAQ do not say enough about the following. Please ask the help desk."
    ),
    nothing_found="Nothing that answers the question was found.",
    no_answer="(no answer)",
    according="According to the documents: {lead}",
    found_passages='For "{label}", the search found these passages:',
    declined='For "{label}", the documents do not say ({why}).',
    absent="nothing about {terms} was found",
    no_direct="no passage says it directly",
    words_occur="\nThe words {words} occur here (not checked to answer the question): ",
    not_in_documents='For "{label}", the documents do not say. Terms searched: {searched}{where}',
    searched_with=" (searched with {tools})",
    gave_up='For "{label}", {attempts} searches found no complete answer.',
    for_reference="\n\nFor reference (incomplete answer):\n",
    open_quote='"',
    close_quote='"',
    separator=", ",
    places_separator=" / ",
)
DECLINES = ("記載がありません", "the documents do not say")
"""What every declined part says, in each language (a test or a benchmark looks for it)."""


def wording_for(text: str) -> Wording:
    """English for a text without any Japanese character, else Japanese."""
    return JAPANESE if _JAPANESE.search(text) else ENGLISH
