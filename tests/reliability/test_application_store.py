"""The application database (research notes and runs: ``.keiri/keiri.db``, or PostgreSQL)
damaged, locked or out of reach (issue 30): each fault → what used to happen → now.

* ``keiri.db`` overwritten with random bytes, truncated, with garbled pages, or a folder
  in its place → raw SQLAlchemy tracebacks from ``research notes list|show`` and
  ``research``, a 500 from the API → now ``STORE_CORRUPT`` naming the file, with "move
  it aside" as the fix (exit 1; the API answers 503); the file is left untouched.
* Another process holding the write lock → ``research`` exited 0 after the busy
  timeout, saved no note and told the user that nothing was found and to rephrase → now
  ``STORE_LOCKED`` (exit 1) saying that another process is writing and to try again.
* PostgreSQL out of reach → raw tracebacks → now ``STORE_UNREACHABLE`` naming the
  server (never its password), exit 1.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from keiri_agent.cli.app import app
from keiri_agent.config import Settings
from keiri_agent.services.research import SAMPLE_KB, ResearchService

runner = CliRunner()
QUESTION = "インボイス制度で請求書に必要な記載事項"


def _database(home: Path) -> Path:
    """``keiri.db`` with one research session in it (written by the product itself)."""
    result = runner.invoke(app, ["research", QUESTION, "--sample", "--session", "s1"])
    assert result.exit_code == 0, result.output
    file = home / ".keiri" / "keiri.db"
    connection = sqlite3.connect(file)
    connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    connection.close()
    return file


def _garbage(file: Path) -> None:
    file.write_bytes(os.urandom(16384))


def _truncated(file: Path) -> None:
    file.write_bytes(file.read_bytes()[:3000])


def _garbled_pages(file: Path) -> None:
    data = bytearray(file.read_bytes())
    for start in range(4096, len(data), 8192):  # every other page after the first
        data[start : start + 4096] = os.urandom(min(4096, len(data) - start))
    file.write_bytes(bytes(data))


def _folder(file: Path) -> None:
    file.unlink()
    for extra in file.parent.glob(f"{file.name}-*"):
        extra.unlink()
    file.mkdir()


def _snapshot(file: Path) -> bytes | None:
    return None if file.is_dir() else file.read_bytes()


@pytest.mark.parametrize("damage", [_garbage, _truncated, _garbled_pages, _folder])
def test_a_damaged_application_database_is_store_corrupt_on_every_command(
    damage: Callable[[Path], None], keiri_home: Path
) -> None:
    file = _database(keiri_home)
    damage(file)
    before = _snapshot(file)
    commands = [
        ["research", "notes", "list"],
        ["research", "notes", "show", "s1"],
        ["research", QUESTION, "--kb", SAMPLE_KB],
    ]
    for command in commands:
        result = runner.invoke(app, command)
        output = result.output + result.stderr
        assert result.exit_code == 1, (command, output)
        assert result.exception is None or isinstance(result.exception, SystemExit), command
        assert "STORE_CORRUPT" in result.stderr, (command, output)
        assert str(file) in result.stderr.replace("\n", ""), command
        assert "移動" in result.stderr and "Traceback" not in output
    assert _snapshot(file) == before  # never deleted or "repaired" for the user


def test_the_api_answers_503_store_corrupt_not_500(
    keiri_home: Path, serve: Callable[..., object]
) -> None:
    _garbage(_database(keiri_home))
    server = serve(Settings(home=keiri_home, provider="offline"))
    with httpx.Client(base_url=server.url, timeout=60) as client:  # type: ignore[attr-defined]
        for method, path in (
            ("GET", "/api/research/sessions"),
            ("GET", "/api/research/sessions/s1/notes"),
        ):
            response = client.request(method, path)
            assert response.status_code == 503, response.text
            assert response.json()["error"]["code"] == "STORE_CORRUPT"
        started = client.post("/api/research", json={"question": QUESTION, "kb": [SAMPLE_KB]})
        assert started.status_code == 503, started.text
        assert started.json()["error"]["code"] == "STORE_CORRUPT"
        assert client.get("/api/health").status_code == 200


@pytest.fixture
def write_lock(keiri_home: Path) -> Iterator[None]:
    """Another process holds ``keiri.db``'s write lock for the whole test."""
    _database(keiri_home)
    ResearchService(Settings(home=keiri_home)).index_sample()
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sqlite3, sys; c = sqlite3.connect(sys.argv[1], isolation_level=None); "
            "c.execute('BEGIN IMMEDIATE'); print('locked', flush=True); sys.stdin.read()",
            str(keiri_home / ".keiri" / "keiri.db"),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
    yield
    holder.communicate("", timeout=30)


@pytest.mark.usefixtures("write_lock")
def test_research_while_another_process_writes_says_so_and_exits_1(keiri_home: Path) -> None:
    result = runner.invoke(app, ["research", QUESTION, "--kb", SAMPLE_KB])
    output = result.output + result.stderr
    assert result.exit_code == 1, output
    assert "STORE_LOCKED" in result.stderr, output
    assert "もう一度" in result.stderr and "Traceback" not in output
    assert "見つかりません" not in output  # not "nothing found, rephrase"


UNREACHABLE = "postgresql+psycopg://keiri:s3cret-pass@127.0.0.1:1/keiri"


@pytest.mark.parametrize(
    "command",
    [
        ["research", "notes", "list"],
        ["research", "notes", "show", "s1"],
        ["research", QUESTION, "--sample"],
        ["analyze", "data.csv", "地域別の売上の合計"],
    ],
)
def test_an_unreachable_postgresql_is_store_unreachable(
    command: list[str], keiri_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (keiri_home / "data.csv").write_text("地域,売上\n関東,100\n近畿,250\n", encoding="utf-8")
    monkeypatch.setenv("KEIRI_AGENT_DATABASE_URL", UNREACHABLE)
    result = runner.invoke(app, command)
    output = result.output + result.stderr
    assert result.exit_code == 1, output
    assert "STORE_UNREACHABLE" in result.stderr, output
    assert "127.0.0.1:1" in result.stderr and "s3cret-pass" not in output
    assert "Traceback" not in output


def test_the_api_answers_503_when_postgresql_is_out_of_reach(
    keiri_home: Path, serve: Callable[..., object]
) -> None:
    settings = Settings(home=keiri_home, provider="offline", database_url=UNREACHABLE)
    server = serve(settings)  # it starts: the database may come up later
    with httpx.Client(base_url=server.url, timeout=60) as client:  # type: ignore[attr-defined]
        response = client.get("/api/research/sessions")
        assert response.status_code == 503, response.text
        body = response.json()["error"]
        assert body["code"] == "STORE_UNREACHABLE" and "s3cret" not in response.text
        assert client.get("/api/health").status_code == 200
