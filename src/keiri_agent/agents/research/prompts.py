"""The deep-research agent's prompts (seed 004 §2–3): planner, summariser, gap check, writer.

Templates are ``str.format`` strings rendered strictly (``llm.structured.render_prompt``):
every placeholder needs a value and every value a placeholder.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from keiri_agent.llm.structured import render_prompt

REPORT_STYLE = """\
- Markdown で書く。最初に「## 結論」（2〜4 文）、続いて観点ごとの「## 見出し」の節。
- 事実を述べる文には、根拠にした資料の番号を [n] の形で付ける（資料一覧にある番号だけ）。
- 資料に書かれていないことは書かない。分からない点は「不明」と書く。
- 「調査の限界」と「出典」の節は書かない（システムが付け加える）。"""


@dataclass(frozen=True)
class ResearchPrompts:
    """Prompt templates of the four LLM steps (override any field to customise)."""

    planner_system: str = (
        "あなたは経理・総務部門の調査担当者です。質問を調べるための検索クエリを計画します。\n"
        "- 一般常識や質問文だけで答えられる場合は needs_research を false にし、"
        "reason に理由を書く。\n"
        "- 調査が必要なら、社内文書やウェブを検索するための具体的なクエリを最大 3 件、"
        "重複しない観点で queries に入れる。reason には計画の狙いを書く。"
    )
    planner_user: str = "質問: {question}"
    summarizer_system: str = (
        "検索で見つかった資料を、調査の観点に沿って日本語で要約します。\n"
        "- 資料に書かれている事実だけを使い、文ごとに根拠の資料番号を [k] で付ける。\n"
        "- 約 {summary_tokens} トークン以内に収める。"
    )
    summarizer_user: str = "質問: {question}\n調査の観点（クエリ）: {query}\n\n資料:\n{snippets}"
    gap_system: str = (
        "ここまでの調査結果を読み、質問に答えるためにまだ足りない情報を判断します。\n"
        "- 足りない点を missing に書き、それを埋める新しい検索クエリを最大 {budget} 件 "
        "queries に入れる（済んだクエリは繰り返さない）。\n"
        "- 十分に調べられていれば queries は空にする。"
    )
    gap_user: str = "質問: {question}\n\n調査結果:\n{steps}"
    writer_system: str = "調査結果から質問への調査レポートを書きます。\n書式:\n{report_style}"
    writer_user: str = (
        "質問: {question}\n\n調査結果（[n] は資料番号）:\n{steps}\n\n資料一覧:\n{sources}\n\n"
        "調べきれなかった点:\n{missing}"
    )

    def render(self, name: str, **values: Any) -> str:
        """The template ``name`` filled with ``values`` (strictly)."""
        template: str = getattr(self, name)
        return render_prompt(template, **values)
