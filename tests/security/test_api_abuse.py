"""The API under hostile requests (issue 30): each used to end in a 500, a connection
reset, a server that could not be reached, or data nobody could reach again.

- ``Last-Event-ID: ²`` / ``①`` (digits to ``str.isdigit``, not to ``int``) → 500; now 400.
- An upload named with 300 characters → 500 (the name was too long for the file
  system); now the name is shortened, extension kept.
- A research session id with ``/`` was accepted, and its notes could never be read or
  deleted (the id is a path segment); now 400 on REST and GraphQL.
- An 8 MiB chunked body was reported to end in a connection reset; not reproduced here
  (httpx, curl, one raw 8 MiB chunk: 413 on the old code too), so its test is a
  regression guard.
- ``KEIRI_AGENT_API_TOKEN=a`` (or blank) started on 0.0.0.0, and a blank token answered
  every request with 401; ``serve --workers 2`` on SQLite started although SQLite
  serves one process. Now each is refused before anything listens, in Japanese.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from api_support import LiveServer, research_workspace
from pydantic import SecretStr

from keiri_agent.api.security import check_bind
from keiri_agent.config import Settings
from keiri_agent.errors import ConfigurationError
from keiri_agent.services.research import SAMPLE_KB

LONG_TOKEN = "0123456789abcdef0123456789abcdef"


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return research_workspace(tmp_path)


def _error(response: httpx.Response, status: int, code: str) -> dict:
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert error["code"] == code and "Traceback" not in response.text
    return error


def test_a_last_event_id_of_other_digits_is_a_400(
    settings: Settings, serve: Callable[..., LiveServer]
) -> None:
    server = serve(settings)
    with httpx.Client(base_url=server.url, timeout=60) as client:
        run = client.post(
            "/api/research", json={"question": "インボイス制度の登録番号", "kb": [SAMPLE_KB]}
        ).json()
        header = client.get(  # a header is Latin-1: 「²」 is the one digit it can carry
            f"/api/research/{run['run_id']}/events", headers={"Last-Event-ID": b"\xb2"}
        )
        _error(header, 400, "LAST_EVENT_ID_INVALID")
        for raw in ("²", "①", "٣"):
            by_query = client.get(
                f"/api/research/{run['run_id']}/events", params={"lastEventId": raw}
            )
            _error(by_query, 400, "LAST_EVENT_ID_INVALID")


def test_a_file_name_of_300_characters_is_shortened_not_a_500(
    settings: Settings, serve: Callable[..., LiveServer]
) -> None:
    server = serve(settings)
    long_name = "経費精算マニュアル" * 34 + ".md"
    assert len(long_name) > 300
    with httpx.Client(base_url=server.url, timeout=120) as client:
        indexed = client.post(
            "/api/helpdesk/kb/long/documents",
            files={"files": (long_name, "# 経費精算\n\n交通費は月末までに申請します。\n".encode())},
        )
        assert indexed.status_code == 200, indexed.text
        report = indexed.json()["manual"]
        names = [*report["added"], *report.get("updated", [])]
        assert names and all(name.endswith(".md") for name in names)
        assert all(len(name.encode()) <= 255 for name in names)
        dataset = client.post(
            "/api/analysis/datasets",
            files={"file": ("売上" * 150 + ".csv", "部門,金額\n営業,100\n".encode())},
            data={"sheet": "²"},
        )
        assert dataset.status_code in (201, 400), dataset.text
        plain = client.post(
            "/api/analysis/datasets",
            files={"file": ("売上" * 150 + ".csv", "部門,金額\n営業,100\n".encode())},
        )
        assert plain.status_code == 201, plain.text


@pytest.mark.parametrize("session_id", ["a/b", "../x", "a?b", "a#b", "a%2Fb", " a b ", "..", "."])
def test_a_session_id_that_cannot_be_a_path_segment_is_refused(
    settings: Settings, serve: Callable[..., LiveServer], session_id: str
) -> None:
    server = serve(settings)
    with httpx.Client(base_url=server.url, timeout=60) as client:
        rest = client.post(
            "/api/research",
            json={"question": "登録番号", "kb": [SAMPLE_KB], "session_id": session_id},
        )
        error = _error(rest, 400, "INPUT_ERROR")
        assert "セッション" in error["message"]
        graphql = client.post(
            "/graphql",
            json={
                "query": "mutation($s: String, $kb: [String!]) { deepResearch("
                'question: "登録番号", sessionId: $s, kb: $kb) { runId } }',
                "variables": {"s": session_id, "kb": [SAMPLE_KB]},
            },
        )
        assert graphql.status_code == 200
        errors = graphql.json()["errors"]
        assert errors and errors[0]["extensions"]["code"] == "INPUT_ERROR"
    assert not list((settings.storage.home / ".keiri").glob("**/a/b*"))


def test_a_session_id_in_japanese_words_still_works(
    settings: Settings, serve: Callable[..., LiveServer]
) -> None:
    server = serve(settings)
    with httpx.Client(base_url=server.url, timeout=60) as client:
        started = client.post(
            "/api/research",
            json={"question": "登録番号", "kb": [SAMPLE_KB], "session_id": "経理_2026-11.a"},
        )
        assert started.status_code == 202, started.text
        notes = client.get("/api/research/sessions/経理_2026-11.a/notes")
        assert notes.status_code == 200


def _chunks(size: int) -> Iterator[bytes]:
    yield b'{"question": "'
    for _ in range(size // 65536):
        yield b"x" * 65536
    yield b'"}'


def test_a_chunked_body_of_8_mib_is_a_413_not_a_reset(
    settings: Settings, serve: Callable[..., LiveServer]
) -> None:
    server = serve(settings)  # default limit: 2 MiB
    with httpx.Client(base_url=server.url, timeout=60) as client:
        for path in ("/api/research", "/graphql"):
            response = client.post(
                path, content=_chunks(8 * 2**20), headers={"Content-Type": "application/json"}
            )
            _error(response, 413, "BODY_TOO_LARGE")
        assert client.get("/api/health").status_code == 200


@pytest.mark.parametrize(
    ("host", "token"),
    [
        ("0.0.0.0", "a"),
        ("0.0.0.0", "x" * 31),
        ("0.0.0.0", ""),
        ("192.168.1.20", "   "),
        ("127.0.0.1", ""),
        ("127.0.0.1", " \u3000 "),
    ],
)
def test_a_short_or_blank_token_is_refused_before_listening(
    tmp_path: Path, host: str, token: str
) -> None:
    settings = Settings(home=tmp_path, provider="offline", api_token=SecretStr(token))
    with pytest.raises(ConfigurationError) as raised:
        check_bind(host, settings)
    assert "トークン" in raised.value.message
    if len(token.strip()) > 3:  # the token itself is never shown
        assert token not in str(raised.value) and token not in str(raised.value.details)
    check_bind("127.0.0.1", settings.with_values(api_token=SecretStr("short")))
    check_bind(host, settings.with_values(api_token=SecretStr(LONG_TOKEN)))


def _serve_cli(tmp_path: Path, env_extra: dict[str, str], *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KEIRI_AGENT_")}
    env |= {"KEIRI_AGENT_HOME": str(tmp_path), "KEIRI_AGENT_PROVIDER": "offline", **env_extra}
    script = Path(sys.executable).with_name("keiri-agent")
    done = subprocess.run(
        [str(script), "serve", *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 1, output
    assert "Traceback" not in output and "API: http" not in output
    return output


def test_serve_refuses_a_weak_token_and_several_workers_on_sqlite(tmp_path: Path) -> None:
    weak = _serve_cli(tmp_path, {"KEIRI_AGENT_API_TOKEN": "a"}, "--host", "0.0.0.0")
    assert "32 文字" in weak and "トークン" in weak
    blank = _serve_cli(tmp_path, {"KEIRI_AGENT_API_TOKEN": " "})
    assert "トークン" in blank and "空" in blank
    workers = _serve_cli(tmp_path, {}, "--workers", "2")
    assert "SQLite" in workers and "--workers 1" in workers and "PostgreSQL" in workers
