"""The HelpDesk agent's search tools: a name, a description and a ``Searcher``.

A :class:`SearchTool` takes one argument, ``query``, and returns
:class:`~keiri_agent.agents.helpdesk.models.SearchOutput` passages that keep
their source. It converts to an OpenAI tool schema (what the model sees) and
to a LangChain tool (for other LangChain code).

:func:`default_tools` builds the seed's two tools: ``search_xyz_manual`` (the
manual's chunks) and ``search_xyz_qa`` (the FAQ). Which retrieval the FAQ tool
uses is decided by the searcher passed in; when it is keyword-only (no
embeddings configured), the tool carries a ``note`` saying so, which the agent
shows with every result of that tool, and each passage records its retriever.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import ToolCall, ToolMessage
from langchain_core.tools import StructuredTool
from pydantic import BaseModel, Field

from keiri_agent.agents.helpdesk.citations import format_numbered_passages, number_sources
from keiri_agent.agents.helpdesk.models import SearchOutput, ToolResult
from keiri_agent.errors import ConfigurationError
from keiri_agent.search.models import Retriever, Searcher

TOOL_NAME_PATTERN = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
"""What OpenAI accepts as a function name."""

QUERY_DESCRIPTION = "検索語（機能名・画面名・エラーメッセージなど具体的なキーワード）"

KEYWORD_QA_NOTE = (
    "埋め込みモデルが設定されていないため、FAQはベクトル検索ではなくキーワード検索で検索しました。"
    "言い換えや同義語では見つからないことがあります。"
)


class SearchQuery(BaseModel):
    """The one argument of every search tool."""

    query: str = Field(description=QUERY_DESCRIPTION)


@dataclass(frozen=True)
class SearchTool:
    """A search the model can call: ``name(query)`` → up to ``k`` passages.

    Args:
        name: The function name the model calls (``[A-Za-z0-9_-]{1,64}``).
        description: What the tool finds and when to use it (the model reads it).
        searcher: Where the passages come from.
        k: How many passages one call returns.
        note: Shown with every result of this tool (e.g. "keyword search only").
    """

    name: str
    description: str
    searcher: Searcher
    k: int = 3
    note: str | None = None

    def __post_init__(self) -> None:
        if not TOOL_NAME_PATTERN.match(self.name):
            raise ConfigurationError(
                f"検索ツール名 {self.name!r} は使えません",
                hint="半角英数字と '_'・'-' で 1〜64 文字にしてください（例: search_xyz_manual）",
            )
        if self.k < 1:
            raise ConfigurationError(
                f"検索ツール {self.name!r} の件数 k={self.k} は使えません",
                hint="k は 1 以上にしてください",
            )

    @property
    def retriever(self) -> Retriever:
        """How the searcher finds passages: keyword, vector or hybrid."""
        return self.searcher.retriever

    def search(self, query: str) -> list[SearchOutput]:
        """The passages for ``query``, best first (at most ``k``)."""
        return [SearchOutput.from_hit(hit) for hit in self.searcher.search(query, self.k)]

    def openai_schema(self) -> dict[str, Any]:
        """The OpenAI tool definition (``{"type": "function", "function": {...}}``)."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": {
                    "type": "object",
                    "properties": {"query": {"type": "string", "description": QUERY_DESCRIPTION}},
                    "required": ["query"],
                },
            },
        }

    def as_langchain_tool(self) -> StructuredTool:
        """A LangChain tool returning the passages as JSON text."""

        def run(query: str) -> str:
            outputs = [output.model_dump(mode="json") for output in self.search(query)]
            payload: dict[str, Any] = {"results": outputs}
            if self.note:
                payload["note"] = self.note
            return json.dumps(payload, ensure_ascii=False)

        return StructuredTool.from_function(
            func=run, name=self.name, description=self.description, args_schema=SearchQuery
        )


def tool_name_part(system_name: str) -> str:
    """``"XYZ"`` → ``"xyz"``: the system name as it may appear in a function name."""
    part = re.sub(r"[^a-z0-9]+", "_", system_name.lower()).strip("_")
    return part or "system"


def default_tools(
    manual: Searcher,
    qa: Searcher,
    *,
    system_name: str = "XYZ",
    manual_name: str | None = None,
    qa_name: str | None = None,
    manual_description: str | None = None,
    qa_description: str | None = None,
    k: int = 3,
) -> list[SearchTool]:
    """The seed's two tools: the manual search and the FAQ search.

    Args:
        manual: The manual's chunks (hybrid when manuals are embedded, else keyword).
        qa: The FAQ (hybrid when embeddings are configured, else keyword).
        system_name: The system the help desk answers about (``"XYZ"``).
        manual_name: Overrides ``search_<system>_manual``.
        qa_name: Overrides ``search_<system>_qa``.
        manual_description: Overrides the manual tool's description.
        qa_description: Overrides the FAQ tool's description.
        k: Passages per call.
    """
    part = tool_name_part(system_name)
    manual_tool = SearchTool(
        name=manual_name or f"search_{part}_manual",
        description=manual_description
        or (
            f"{system_name}システムのマニュアルを検索し、関連する箇所（文書名・ページ・見出し付き）を返します。"
            "操作手順、設定方法、仕様、画面の項目、エラーメッセージの意味など、マニュアルに書かれている"
            "情報を調べるときに使います。" + _retrieval_sentence(manual.retriever)
        ),
        searcher=manual,
        k=k,
    )
    keyword_qa = qa.retriever == "keyword"
    qa_tool = SearchTool(
        name=qa_name or f"search_{part}_qa",
        description=qa_description
        or (
            f"{system_name}システムのよくある質問（FAQ）と過去の問い合わせへの回答を検索し、"
            "似た質問とその回答を返します。トラブルの対処法や、よくある疑問を調べるときに使います。"
            + _retrieval_sentence(qa.retriever)
        ),
        searcher=qa,
        k=k,
        note=KEYWORD_QA_NOTE if keyword_qa else None,
    )
    return [manual_tool, qa_tool]


def tool_map(tools: Sequence[SearchTool]) -> dict[str, SearchTool]:
    """Tools by name (seed §11.1); duplicate names are a configuration error."""
    mapping: dict[str, SearchTool] = {}
    for tool in tools:
        if tool.name in mapping:
            raise ConfigurationError(
                f"検索ツール名 {tool.name!r} が重複しています",
                hint="ツールごとに別の名前を付けてください",
            )
        mapping[tool.name] = tool
    return mapping


def run_tool_calls(
    tools: Mapping[str, SearchTool], calls: Sequence[ToolCall]
) -> tuple[list[ToolResult], list[ToolMessage]]:
    """Run the model's tool calls: one ``ToolResult`` and one ``ToolMessage`` per call.

    The messages number the passages by citation over all calls (the same source has
    the same number). A call to an unknown tool or without a ``query`` finds nothing
    and its message says what to fix, so the model can correct itself.
    """
    results: list[ToolResult] = []
    errors: dict[int, str] = {}
    for index, call in enumerate(calls):
        args_text = json.dumps(call["args"], ensure_ascii=False)
        tool = tools.get(call["name"])
        query = call["args"].get("query")
        if tool is None:
            errors[index] = (
                f"エラー: ツール {call['name']!r} はありません。使えるツール: {', '.join(tools)}"
            )
        elif not isinstance(query, str) or not query.strip():
            errors[index] = "エラー: 引数 query に検索語（文字列）を指定してください。"
        outputs = tool.search(query) if tool and index not in errors else []  # type: ignore[arg-type]
        results.append(ToolResult(tool_name=call["name"], args=args_text, results=outputs))
    numbers = {source.citation: source.number for source in number_sources(results)}
    messages: list[ToolMessage] = []
    for index, (call, result) in enumerate(zip(calls, results, strict=True)):
        tool = tools.get(call["name"])
        content = errors.get(index) or format_numbered_passages(
            result, numbers, tool.note if tool else None
        )
        messages.append(ToolMessage(content=content, tool_call_id=call["id"] or ""))
    return results, messages


def _retrieval_sentence(retriever: Retriever) -> str:
    if retriever == "keyword":
        return "キーワード検索なので、質問文ではなく具体的な語で検索してください。"
    if retriever == "vector":
        return "意味の近い文章も見つかります（ベクトル検索）。"
    return "キーワードと意味の両方で検索します（ハイブリッド検索）。"
