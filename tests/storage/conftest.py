"""A real PostgreSQL server for the storage tests, started in a temporary folder.

``KEIRI_TEST_POSTGRES_URL`` points the tests at an existing server instead. The
throwaway server listens only on a Unix socket (no TCP), runs as the ``postgres``
user when the tests run as root (PostgreSQL refuses root), and is stopped and
deleted at the end of the session. Without server binaries the tests that need
it are skipped with the reason.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest


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
