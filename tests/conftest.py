"""Fixtures for every test: no network, no real provider, a throwaway workspace.

* ``_network_guard`` (session, autouse): connecting a socket anywhere but loopback
  (127.0.0.0/8, ::1, ``localhost``) or an AF_UNIX path, or resolving a
  non-local host name, raises ``NetworkAccessError``. It derives from pytest's
  failure exception (a ``BaseException``), so ``except Exception`` in the code
  under test cannot swallow it and the test fails with the message.
  Assert it with ``pytest.raises(pytest.fail.Exception, match="network access")``.
* ``keiri_home`` (autouse): removes environment variables that would select a
  real provider, tracing or a proxy, and runs the test with the current
  directory and ``KEIRI_AGENT_HOME`` in a fresh temporary folder (so no
  developer ``.env`` is read and nothing is written into the repository).
  Request it by name to get that folder.
* ``postgres_url`` (session): a live PostgreSQL database for the storage tests,
  started in a temporary folder on a Unix socket (``KEIRI_TEST_POSTGRES_URL``
  points the tests at an existing server instead; without server binaries the
  tests that need it are skipped with the reason).
* ``app_database_url`` (parametrised ``sqlite`` / ``postgresql``): the URL of an
  empty application database for the test, a SQLite file in the workspace or a
  fresh database on the ``postgres_url`` server (dropped afterwards).
* ``postgres_database``: the URL of a fresh database on that server (dropped afterwards).
* ``serve``: ``serve(settings, **create_app_options)`` → the API app served by uvicorn
  on loopback (``tests/api/api_support.LiveServer``), stopped after the test.
"""

from __future__ import annotations

import glob
import ipaddress
import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "api"))  # api_support, everywhere

_ENV_PREFIXES = ("KEIRI_AGENT_", "AZURE_OPENAI_", "OPENAI_", "LANGCHAIN_", "LANGSMITH_")
_ENV_NAMES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY")
_LOCAL_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost"}
_BIND_ADDRESSES = {None, "", "0.0.0.0", "::"}  # resolved for listening, not connecting


class NetworkAccessError(pytest.fail.Exception):  # type: ignore[name-defined]
    """A test tried to reach a non-loopback address."""


def _is_loopback(host: Any) -> bool:
    if isinstance(host, bytes):
        host = host.decode()
    if not isinstance(host, str):
        return False
    if host.lower() in _LOCAL_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.split("%", 1)[0]).is_loopback
    except ValueError:
        return False


def _check_address(sock: socket.socket, address: Any) -> None:
    if getattr(socket, "AF_UNIX", None) is not None and sock.family == socket.AF_UNIX:
        return
    host = address[0] if isinstance(address, tuple) else address
    if not _is_loopback(host):
        raise NetworkAccessError(
            f"network access blocked in tests: connect to {address!r}. Use StubOpenAIServer "
            "(keiri_agent.llm.testing) or another loopback fake instead."
        )


@pytest.fixture(autouse=True, scope="session")
def _network_guard() -> Iterator[None]:
    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex
    real_getaddrinfo = socket.getaddrinfo

    def guarded_connect(self: socket.socket, address: Any) -> None:
        _check_address(self, address)
        return real_connect(self, address)

    def guarded_connect_ex(self: socket.socket, address: Any) -> int:
        _check_address(self, address)
        return real_connect_ex(self, address)

    def guarded_getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host not in _BIND_ADDRESSES and not _is_loopback(host):
            raise NetworkAccessError(
                f"network access blocked in tests: resolving {host!r}. Use a loopback fake instead."
            )
        return real_getaddrinfo(host, *args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(socket.socket, "connect", guarded_connect)
        patch.setattr(socket.socket, "connect_ex", guarded_connect_ex)
        patch.setattr(socket, "getaddrinfo", guarded_getaddrinfo)
        yield


@pytest.fixture(autouse=True)
def keiri_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A clean environment and an empty workspace folder as cwd and KEIRI_AGENT_HOME."""
    for name in list(os.environ):
        if name.upper().startswith(_ENV_PREFIXES) or name.upper() in _ENV_NAMES:
            monkeypatch.delenv(name)
    home = tmp_path / "keiri_home"
    home.mkdir()
    monkeypatch.setenv("KEIRI_AGENT_HOME", str(home))
    monkeypatch.chdir(home)
    return home


def _server_binary(name: str) -> str | None:
    candidates = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"), reverse=True)
    return shutil.which(name) or (candidates[0] if candidates else None)


def _as_user() -> tuple[list[str], str | None]:
    if os.geteuid() != 0:
        return [], None
    for user in ("postgres", "nobody"):
        try:
            pwd.getpwnam(user)
        except KeyError:
            continue
        return ["runuser", "-u", user, "--"], user
    pytest.skip("running as root and no unprivileged user to run PostgreSQL as")


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A SQLAlchemy URL of a live PostgreSQL database."""
    configured = os.environ.get("KEIRI_TEST_POSTGRES_URL")
    if configured:
        yield configured
        return
    initdb, pg_ctl = _server_binary("initdb"), _server_binary("pg_ctl")
    if initdb is None or pg_ctl is None:
        pytest.skip(
            "PostgreSQL server binaries not found; install postgresql or set "
            "KEIRI_TEST_POSTGRES_URL"
        )
    prefix, user = _as_user()
    base = Path(tempfile.mkdtemp(prefix="keiri-pg-"))
    if user is not None:
        shutil.chown(base, user=user)
    data = base / "data"
    try:
        subprocess.run(
            [*prefix, initdb, "-D", str(data), "-A", "trust", "-U", "keiri", "--no-sync"],
            check=True,
            capture_output=True,
        )
        options = f"-k {base} -c listen_addresses='' -F"
        subprocess.run(
            [
                *prefix,
                pg_ctl,
                "-D",
                str(data),
                "-o",
                options,
                "-l",
                str(base / "log"),
                "-w",
                "start",
            ],
            check=True,
            capture_output=True,
        )
    except subprocess.CalledProcessError as error:
        shutil.rmtree(base, ignore_errors=True)
        pytest.fail(f"could not start PostgreSQL: {error.stderr.decode(errors='replace')}")
    try:
        yield f"postgresql+psycopg://keiri@/postgres?host={base}"
    finally:
        subprocess.run(
            [*prefix, pg_ctl, "-D", str(data), "-m", "immediate", "stop"], capture_output=True
        )
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(params=["sqlite", "postgresql"])
def app_database_url(request: pytest.FixtureRequest, keiri_home: Path) -> Iterator[str]:
    """An empty application database on SQLite or PostgreSQL (its SQLAlchemy URL)."""
    if request.param == "sqlite":
        yield f"sqlite:///{keiri_home / 'app.db'}"
        return
    yield request.getfixturevalue("postgres_database")


@pytest.fixture
def postgres_database(postgres_url: str) -> Iterator[str]:
    """A fresh database on the throwaway PostgreSQL server (dropped afterwards)."""
    import sqlalchemy

    server = sqlalchemy.make_url(postgres_url)
    name = f"keiri_db_{uuid.uuid4().hex[:12]}"
    admin = sqlalchemy.create_engine(server, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as connection:
            connection.execute(sqlalchemy.text(f'CREATE DATABASE "{name}"'))
        yield server.set(database=name).render_as_string(hide_password=False)
        with admin.connect() as connection:
            connection.execute(sqlalchemy.text(f'DROP DATABASE "{name}" WITH (FORCE)'))
    finally:
        admin.dispose()


@pytest.fixture
def serve() -> Iterator[Callable[..., Any]]:
    """``serve(settings, **options)`` → a started ``LiveServer`` (stopped after)."""
    from api_support import LiveServer

    from keiri_agent.api.app import create_app

    started: list[LiveServer] = []

    def start(settings: Any, **options: Any) -> LiveServer:
        server = LiveServer(create_app(settings, **options)).start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()
