"""GraphQL (Strawberry) at ``/graphql``: seed 004's ``mutation deepResearch``.

    mutation { deepResearch(question: "…", sessionId: null, kb: ["research"]) {
        runId sessionId status eventsUrl } }

The mutation starts a run exactly like ``POST /api/research`` (the same service, the
same ``kb`` rules: none = every knowledge base but the bundled sample ``research``, which
is searched only when named, and then alone) and returns its id; the progress and the
report stream from ``eventsUrl`` over SSE.
``researchRun(runId)`` reads a run's state. A request is bounded before it is parsed
(``graphql_limits``: tokens, aliases, depth, ``deepResearch`` per request), and each
``deepResearch`` counts as a run start (``run_starts``).
"""

from __future__ import annotations

from typing import Any

import strawberry
from cross_web import HTTPException as GraphQLHTTPException
from fastapi import APIRouter, Request
from fastapi.routing import APIRoute
from graphql import GraphQLError
from strawberry.fastapi import GraphQLRouter
from strawberry.types import ExecutionContext, Info

from keiri_agent.api.context import ApiContext
from keiri_agent.api.errors import ApiError
from keiri_agent.api.graphql_limits import check_document
from keiri_agent.api.owned import continued_subject, seen_run
from keiri_agent.config import Settings
from keiri_agent.errors import KeiriAgentError
from keiri_agent.people.roles import Person, require
from keiri_agent.services.research_runs import RunRecord


@strawberry.type
class ResearchRunType:
    run_id: str
    session_id: str
    question: str
    status: str
    last_event_id: int
    events_url: str
    report_md: str | None
    error_code: str | None
    error_message: str | None


def _run(record: RunRecord) -> ResearchRunType:
    result = record.result or {}
    error = record.error or {}
    return ResearchRunType(
        run_id=record.run_id,
        session_id=record.session_id,
        question=record.question,
        status=record.status,
        last_event_id=record.last_seq,
        events_url=f"/api/research/{record.run_id}/events",
        report_md=result.get("report_md"),
        error_code=error.get("code"),
        error_message=error.get("message"),
    )


def _context(info: Info[Any, Any]) -> ApiContext:
    request: Request = info.context["request"]
    context: ApiContext = request.app.state.context
    return context


def _person(info: Info[Any, Any]) -> Person:
    request: Request = info.context["request"]
    person: Person = request.state.person
    return person


class ResearchError(Exception):
    """A core or API error as a GraphQL error (message and hint in Japanese, code in
    extensions)."""

    def __init__(self, error: KeiriAgentError | ApiError) -> None:
        if isinstance(error, ApiError):
            super().__init__(error.message_ja)
            self.extensions = {"code": error.code, "hint": error.hint_ja}
        else:
            super().__init__(error.message)
            self.extensions = {"code": error.code, "hint": error.hint}


@strawberry.type
class Query:
    @strawberry.field
    def research_run(self, info: Info[Any, Any], run_id: str) -> ResearchRunType | None:
        context = _context(info)
        try:
            seen_run(context, _person(info), run_id)
        except KeiriAgentError as error:
            raise ResearchError(error) from None
        record = context.research_runs.get(run_id)
        return None if record is None else _run(record)


@strawberry.type
class Mutation:
    @strawberry.mutation
    def deep_research(
        self,
        info: Info[Any, Any],
        question: str,
        session_id: str | None = None,
        kb: list[str] | None = None,
    ) -> ResearchRunType:
        request: Request = info.context["request"]
        context, person = _context(info), _person(info)
        try:
            require(person, "run")
            if session_id:
                continued_subject(context, person, "research", session_id)
            request.app.state.run_starts.take(request)
            record = context.research_runs.start(
                question, session_id=session_id, kb_names=kb or [], owner=person.login
            )
        except (KeiriAgentError, ApiError) as error:
            raise ResearchError(error) from None
        return _run(record)


class Schema(strawberry.Schema):
    """Logs unexpected errors only: a user's bad input is answered, not logged."""

    def process_errors(
        self, errors: list[GraphQLError], execution_context: ExecutionContext | None = None
    ) -> None:
        unexpected = [e for e in errors if not isinstance(e.original_error, ResearchError)]
        super().process_errors(unexpected, execution_context)


schema = Schema(query=Query, mutation=Mutation)


class _Router(GraphQLRouter[Any, Any]):
    """Strawberry's router whose transport errors (no query, a body that is not JSON)
    have the API's one error shape instead of Strawberry's plain text, and whose
    documents are checked against ``graphql_limits`` before they are parsed."""

    def __init__(self, *args: Any, research_per_request: int, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.research_per_request = research_per_request

    async def parse_http_body(self, request: Any) -> Any:
        data = await super().parse_http_body(request)
        for item in data if isinstance(data, list) else [data]:
            check_document(item.query, research_per_request=self.research_per_request)
        return data

    async def run(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return await super().run(*args, **kwargs)
        except GraphQLHTTPException as error:
            raise ApiError(
                error.status_code,
                "GRAPHQL_REQUEST_INVALID",
                f"GraphQL のリクエストを読み取れません（{error.reason}）",
                f"The GraphQL request cannot be read ({error.reason})",
                '{"query": "…", "variables": {…}} を JSON で POST してください',
                'POST {"query": "…", "variables": {…}} as JSON',
            ) from None


def router(settings: Settings) -> APIRouter:
    """A new ``/graphql`` router (GraphiQL in the browser at the same address)."""
    graphql: APIRouter = _Router(
        schema,
        path="/graphql",
        tags=["graphql"],
        research_per_request=settings.api.api_graphql_research_per_request,
    )
    for route in graphql.routes:  # GET answers the GraphiQL page, or a query's JSON result
        if isinstance(route, APIRoute) and "GET" in (route.methods or ()):
            route.responses[200]["content"] = {"text/html": {}, "application/json": {}}
    return graphql
