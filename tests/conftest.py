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
"""

from __future__ import annotations

import ipaddress
import os
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

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
