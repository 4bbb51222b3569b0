"""Who may call the API, over real HTTP to uvicorn on loopback: the bearer token on every
protected route (iterated from the app, so routes added later are covered), the bind check
(also through ``keiri-agent serve`` in a subprocess), the origin guard and DNS rebinding,
the body limits, and the language of the API's own errors."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from api_support import LiveServer, protected_calls
from fastapi.testclient import TestClient
from pydantic import SecretStr
from starlette.websockets import WebSocketDisconnect

from keiri_agent.api.app import create_app
from keiri_agent.api.security import check_bind
from keiri_agent.config import Settings
from keiri_agent.errors import ConfigurationError

TOKEN = "correct-horse-battery-staple-7f3a"
EVIL = "http://evil.example"
UI = "http://localhost:3000"


def assert_error(response: httpx.Response, status: int, code: str) -> dict:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    error = response.json()["error"]
    assert error["code"] == code
    assert set(error) == {"code", "message", "hint", "details"}
    assert error["message"] and "Traceback" not in response.text
    return error


def test_every_protected_route_refuses_a_missing_or_wrong_token_and_takes_the_right_one(
    settings: Settings, serve: Callable[..., LiveServer]
) -> None:
    settings = settings.with_values(api_token=SecretStr(TOKEN))
    calls = list(protected_calls(settings))
    assert len(calls) >= 8 and ("POST", "/graphql") in calls
    server = serve(settings)
    with httpx.Client(base_url=server.url, timeout=30) as client:
        for method, path in calls:
            for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": TOKEN}):
                response = client.request(method, path, headers=headers)
                assert_error(response, 401, "UNAUTHORIZED")
                assert response.headers["www-authenticate"] == "Bearer", (method, path)
            right = client.request(method, path, headers={"Authorization": f"Bearer {TOKEN}"})
            assert right.status_code != 401, (method, path, right.text)
        health = client.get("/api/health")
        assert health.status_code == 200 and health.json()["token_required"] is True
        english = client.get("/api/research/x1", headers={"Accept-Language": "en"})
        assert assert_error(english, 401, "UNAUTHORIZED")["message"] == (
            "An access token is required"
        )


def test_the_graphql_websocket_refuses_a_missing_or_wrong_token(settings: Settings) -> None:
    settings = settings.with_values(api_token=SecretStr(TOKEN))
    protocol = ["graphql-transport-ws"]
    with TestClient(create_app(settings)) as client:
        for headers in ({}, {"Authorization": "Bearer wrong"}):
            with (
                pytest.raises(WebSocketDisconnect) as closed,
                client.websocket_connect("/graphql", protocol, headers=headers) as ws,
            ):
                ws.send_json({"type": "connection_init"})
                ws.receive_json()
            assert closed.value.code == 1008
        right = {"Authorization": f"Bearer {TOKEN}"}
        with client.websocket_connect("/graphql", protocol, headers=right) as ws:
            ws.send_json({"type": "connection_init"})
            assert ws.receive_json()["type"] == "connection_ack"


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.20", "::", "example.com"])
def test_binding_beyond_loopback_needs_a_token(tmp_path: Path, host: str) -> None:
    settings = Settings(home=tmp_path, provider="offline")
    with pytest.raises(ConfigurationError) as raised:
        check_bind(host, settings)
    assert "KEIRI_AGENT_API_TOKEN" in (raised.value.hint or "")
    assert "トークン" in raised.value.message
    check_bind(host, settings.with_values(api_token=SecretStr(TOKEN)))
    for loopback in ("127.0.0.1", "localhost", "::1"):
        check_bind(loopback, settings)


def _serve_cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KEIRI_AGENT_")}
    env |= {"KEIRI_AGENT_HOME": str(tmp_path), "KEIRI_AGENT_PROVIDER": "offline"}
    script = Path(sys.executable).with_name("keiri-agent")
    command = [str(script), "serve", *args]
    return subprocess.run(
        command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60
    )


def test_serve_beyond_loopback_without_a_token_exits_with_a_japanese_message(
    tmp_path: Path,
) -> None:
    done = _serve_cli(tmp_path, "--host", "0.0.0.0", "--port", "1")
    assert done.returncode == 1, done.stdout + done.stderr
    output = done.stdout + done.stderr
    assert "トークンが未設定" in output and "KEIRI_AGENT_API_TOKEN" in output
    assert "Traceback" not in output and "API: http" not in output


def test_a_foreign_origin_is_refused_and_configured_ones_pass(
    settings: Settings, serve: Callable[..., LiveServer]
) -> None:
    server = serve(settings.with_values(api_cors_origins=(UI,)))
    with httpx.Client(base_url=server.url, timeout=30) as client:
        refused = client.get("/api/research/sessions", headers={"Origin": EVIL})
        assert_error(refused, 403, "ORIGIN_REFUSED")
        english = client.post(
            "/api/research",
            json={"question": "x"},
            headers={"Origin": EVIL, "Accept-Language": "en"},
        )
        assert assert_error(english, 403, "ORIGIN_REFUSED")["message"].isascii()
        same = client.get("/api/research/sessions", headers={"Origin": server.url})
        assert same.status_code == 200, same.text
        configured = client.get("/api/research/sessions", headers={"Origin": UI})
        assert configured.status_code == 200
        assert configured.headers["access-control-allow-origin"] == UI
        preflight = client.options(
            "/api/research",
            headers={
                "Origin": UI,
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "authorization,content-type",
            },
        )
        assert preflight.status_code == 200, preflight.text
        assert preflight.headers["access-control-allow-origin"] == UI
        assert "POST" in preflight.headers["access-control-allow-methods"]
        evil_preflight = client.options(
            "/api/research",
            headers={"Origin": EVIL, "Access-Control-Request-Method": "POST"},
        )
        assert "access-control-allow-origin" not in evil_preflight.headers


def test_a_rebinding_host_name_is_refused_on_an_unauthenticated_loopback_server(
    settings: Settings, serve: Callable[..., LiveServer]
) -> None:
    server = serve(settings)
    with httpx.Client(base_url=server.url, timeout=30) as client:
        refused = client.get("/api/research/sessions", headers={"Host": "evil.example"})
        assert_error(refused, 403, "ORIGIN_REFUSED")
        english = client.get(
            "/api/health", headers={"Host": "evil.example:80", "Accept-Language": "en"}
        )
        assert assert_error(english, 403, "ORIGIN_REFUSED")["message"].isascii()
        for host in ("localhost", f"127.0.0.1:{server.port}", "[::1]:8000"):
            assert client.get("/api/health", headers={"Host": host}).status_code == 200


def _chunks(size: int) -> Iterator[bytes]:
    yield b'{"question": "'
    for _ in range(size // 65536):
        yield b"x" * 65536
    yield b'"}'


def test_a_body_over_the_limit_is_413_declared_or_chunked(
    settings: Settings, serve: Callable[..., LiveServer]
) -> None:
    server = serve(settings.with_values(api_max_body_mb=1))
    big = b'{"question": "' + b"x" * (2 * 2**20) + b'"}'
    with httpx.Client(base_url=server.url, timeout=30) as client:
        for path in ("/api/research", "/graphql"):
            declared = client.post(path, content=big, headers={"Content-Type": "application/json"})
            assert_error(declared, 413, "BODY_TOO_LARGE")
            chunked = client.post(
                path, content=_chunks(2 * 2**20), headers={"Content-Type": "application/json"}
            )
            assert "content-length" not in chunked.request.headers
            assert_error(chunked, 413, "BODY_TOO_LARGE")
        english = client.post(
            "/api/research",
            content=_chunks(2 * 2**20),
            headers={"Content-Type": "application/json", "Accept-Language": "en"},
        )
        assert assert_error(english, 413, "BODY_TOO_LARGE")["message"].isascii()
        small = client.post("/api/research", json={"question": ""})
        assert_error(small, 422, "REQUEST_INVALID")
