"""What one GraphQL request may ask for, checked before Strawberry parses and runs it.

- ``MAX_TOKENS`` tokens per document: the document is lexed only that far, so a body
  of a hundred thousand aliases costs as little as one of ``MAX_TOKENS`` tokens (the
  parse runs on the event loop; unbounded, it stalled every other request).
- ``MAX_ALIASES`` aliases and ``MAX_DEPTH`` levels of fields per operation, fragments
  counted as often as they are spread (a fragment written once and spread many times
  would otherwise multiply what a written limit allows).
- ``research_per_request`` ``deepResearch`` fields per operation (the setting
  ``api_graphql_research_per_request``, default 1): each starts a run.

A document that breaks a limit is answered 400 ``GRAPHQL_LIMIT`` naming the limit; a
document that does not parse is left to Strawberry, which reports its syntax error.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from graphql import GraphQLError, parse
from graphql.language import (
    DocumentNode,
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    InlineFragmentNode,
    Lexer,
    OperationDefinitionNode,
    SelectionSetNode,
    Source,
    TokenKind,
)

from keiri_agent.api.errors import ApiError

MAX_TOKENS = 2_000
MAX_ALIASES = 20
MAX_DEPTH = 10
RESEARCH_FIELD = "deepResearch"


@dataclass
class _Counts:
    aliases: int = 0
    depth: int = 0
    research: int = 0
    seen: set[str] = field(default_factory=set)


def check_document(query: str | None, *, research_per_request: int) -> None:
    """``ApiError`` (400 ``GRAPHQL_LIMIT``) when ``query`` breaks a limit above."""
    if not query:
        return
    if _more_tokens_than(query, MAX_TOKENS):
        raise _limit(
            f"GraphQL の問い合わせが長すぎます（{MAX_TOKENS:,} トークンまで）",
            f"The GraphQL document has more than {MAX_TOKENS:,} tokens",
            "問い合わせを分けて送ってください",
            "Split the request",
            "tokens",
            MAX_TOKENS,
        )
    try:
        document = parse(query, max_tokens=MAX_TOKENS)
    except GraphQLError:
        return  # Strawberry answers the syntax error
    fragments = _fragments(document)
    for operation in document.definitions:
        if isinstance(operation, OperationDefinitionNode):
            counts = _Counts()
            _walk(operation.selection_set, fragments, counts, depth=1, root=True)
            _check(counts, research_per_request)


def _more_tokens_than(query: str, limit: int) -> bool:
    """Whether ``query`` has more than ``limit`` tokens (lexed no further than that)."""
    lexer = Lexer(Source(query))
    try:
        for _ in range(limit + 1):
            if lexer.advance().kind == TokenKind.EOF:
                return False
    except GraphQLError:
        return False  # a syntax error: Strawberry reports it
    return True


def _fragments(document: DocumentNode) -> dict[str, FragmentDefinitionNode]:
    return {
        definition.name.value: definition
        for definition in document.definitions
        if isinstance(definition, FragmentDefinitionNode)
    }


def _walk(
    selections: SelectionSetNode | None,
    fragments: dict[str, FragmentDefinitionNode],
    counts: _Counts,
    *,
    depth: int,
    root: bool,
) -> None:
    """Count aliases, depth and root ``deepResearch`` fields, expanding fragments where
    they are spread (a fragment spread inside itself is not followed again)."""
    if selections is None:
        return
    counts.depth = max(counts.depth, depth)
    if counts.aliases > MAX_ALIASES or counts.depth > MAX_DEPTH:
        return  # already over: no need to expand further
    for selection in selections.selections:
        if isinstance(selection, FieldNode):
            counts.aliases += selection.alias is not None
            counts.research += root and selection.name.value == RESEARCH_FIELD
            _walk(selection.selection_set, fragments, counts, depth=depth + 1, root=False)
        elif isinstance(selection, InlineFragmentNode):
            _walk(selection.selection_set, fragments, counts, depth=depth, root=root)
        elif isinstance(selection, FragmentSpreadNode):
            name = selection.name.value
            fragment = fragments.get(name)
            if fragment is None or name in counts.seen:
                continue
            counts.seen.add(name)
            _walk(fragment.selection_set, fragments, counts, depth=depth, root=root)
            counts.seen.discard(name)


def _check(counts: _Counts, research_per_request: int) -> None:
    if counts.research > research_per_request:
        raise _limit(
            f"1 回の問い合わせで開始できる deepResearch は {research_per_request} 件までです"
            f"（{counts.research} 件ありました）",
            f"At most {research_per_request} deepResearch per request "
            f"({counts.research} were sent)",
            "調査ごとに別の問い合わせで送ってください。上限は管理者が "
            "KEIRI_AGENT_API_GRAPHQL_RESEARCH_PER_REQUEST で変えられます",
            "Send one request per research run; the administrator can raise the limit",
            "deepResearch",
            research_per_request,
        )
    if counts.aliases > MAX_ALIASES:
        raise _limit(
            f"GraphQL の別名（alias）が多すぎます（{MAX_ALIASES} 個まで）",
            f"Too many aliases (at most {MAX_ALIASES})",
            "問い合わせを分けて送ってください",
            "Split the request",
            "aliases",
            MAX_ALIASES,
        )
    if counts.depth > MAX_DEPTH:
        raise _limit(
            f"GraphQL の問い合わせの入れ子が深すぎます（深さ {MAX_DEPTH} まで）",
            f"The query is nested too deeply (at most {MAX_DEPTH} levels)",
            "必要な項目だけを浅く問い合わせてください",
            "Ask for fewer nested fields",
            "depth",
            MAX_DEPTH,
        )


def _limit(
    message_ja: str, message_en: str, hint_ja: str, hint_en: str, limit: str, value: int
) -> ApiError:
    return ApiError(
        400,
        "GRAPHQL_LIMIT",
        message_ja,
        message_en,
        hint_ja,
        hint_en,
        {"limit": limit, "max": value},
    )
