"""schemathesis against the app's own OpenAPI spec: every operation, a bounded number of
generated requests (derandomized; valid and invalid ones), over real HTTP to uvicorn on
loopback. No response may be a server error (5xx) or differ from what the spec documents
(status, content type, body)."""

from __future__ import annotations

import itertools
from collections.abc import Callable

import pytest
import schemathesis
from api_support import LiveServer
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis.errors import Unsatisfiable
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from keiri_agent.config import Settings

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]
MAX_EXAMPLES = 20


@pytest.mark.slow
def test_every_operation_conforms_to_the_spec_and_never_fails_on_the_server(
    settings: Settings, serve: Callable[..., LiveServer]
) -> None:
    server = serve(settings)
    schema = schemathesis.openapi.from_url(f"{server.url}/openapi.json")
    operations = [result.ok() for result in schema.get_all_operations()]  # type: ignore[union-attr]
    assert len(operations) >= 8, "the spec lists the API's routes"
    failures: list[str] = []

    for operation, mode in itertools.product(operations, schemathesis.GenerationMode):

        @given(case=operation.as_strategy(generation_mode=mode))
        @hypothesis_settings(
            max_examples=MAX_EXAMPLES,
            derandomize=True,
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        def exercise(case: schemathesis.Case) -> None:
            response = case.call(base_url=server.url, timeout=30)
            case.validate_response(response, checks=CHECKS)

        try:
            exercise()
        except Unsatisfiable:  # an operation without inputs has no invalid request
            assert mode is schemathesis.GenerationMode.NEGATIVE
        except Exception as error:  # collect every operation's failures, then report them all
            failures.append(f"{operation.label} ({mode.value}): {str(error)[:2000]}")

    assert not failures, "\n\n".join(failures)
