"""Seed 002 §12 (セキュリティ/運用), proved: uploads, API keys, masked logs, plan/run paths.

- uploads are read in memory (no file written, also when reading fails); the run state
  keeps them for ``resume`` (owner-only file), the JSONL log never holds their bytes;
- the configured API key appears in no file of the workspace, no error, no log record
  and no output, even when a plan reads it from the environment and a node fails;
- values under secret-looking keys and key-like text are masked in the log and in the
  errors returned to users;
- plan ids and run ids cannot leave ``designs/`` / ``runs/``.
"""

from __future__ import annotations

import base64
import io
import logging
import os
import stat
import sys
import tempfile
import zipfile
from pathlib import Path

import pytest
from runner_support import events, make_plan, make_runner, node

from keiri_agent.config import Settings
from keiri_agent.errors import UserInputError
from keiri_agent.files.archive import ArchiveError, read_zip_2tier
from keiri_agent.masking import MASK, mask_secrets
from keiri_agent.plans.dsl.loader import load_plan_file
from keiri_agent.plans.run.run_log import log_path_for, sanitize
from keiri_agent.plans.run.run_state import find_state
from keiri_agent.plans.store import PlanStore

SAMPLE_PLANS = Path(__file__).resolve().parents[2] / "src" / "keiri_agent" / "samples" / "plans"
KEY_LIKE = "sk-test-SENTINEL-123"
NOT_KEY_LIKE = "az0SENTINEL9f8e7d6c5b4a"  # no sk-/Bearer shape: masked only as a known key


def _files_containing(root: Path, needle: bytes) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file() and needle in p.read_bytes())


def _make_zip(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return buffer.getvalue()


# ------------------------------------------------------------------------------ API keys


@pytest.mark.parametrize(
    ("variable", "secret"),
    [("KEIRI_AGENT_OPENAI_API_KEY", KEY_LIKE), ("AZURE_OPENAI_API_KEY", NOT_KEY_LIKE)],
)
def test_api_key_is_never_written_logged_or_returned_in_errors(
    keiri_home: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
    variable: str,
    secret: str,
) -> None:
    monkeypatch.setenv(variable, secret)
    settings = Settings()
    assert secret not in repr(settings) and secret not in str(settings.model_dump())
    assert secret not in settings.describe()
    reference = f"${{env.{variable}}}"
    plan = make_plan(
        node("echo", value=reference, label=f"echo {reference}"),
        node("fails", label=f"key {reference}", fail_times=5),
        node("crashes", label=f"key {reference}", crash=True),
        node("after", value="${echo.value}"),
        on_error="continue",
    )
    caplog.set_level(logging.DEBUG)
    runner = make_runner(keiri_home / "runs", env=dict(os.environ))

    result = runner.start(plan, vars={"api_key": secret, "note": f"key is {secret}"})

    assert result.status == "failed"
    assert {e["details"]["node_id"] for e in result.errors} == {"fails", "crashes"}
    crash = next(e for e in result.errors if e["details"]["node_id"] == "crashes")
    assert "RuntimeError" in crash["message"] and MASK in crash["message"]
    assert secret not in str(result.errors)
    assert _files_containing(keiri_home, secret.encode()) == []
    assert result.log_path.is_file() and result.state_path is not None
    assert MASK in result.state_path.read_text(encoding="utf-8")  # the echoed output
    assert all(secret not in record.getMessage() for record in caplog.records)
    captured = capsys.readouterr()
    assert secret not in captured.out and secret not in captured.err


# ------------------------------------------------------------------------------ masking


SENSITIVE = {
    "password": "hunter2-plain",
    "api_key": "plain-api-key",
    "access_token": "plain-token",
    "マイナンバー": "123456789012",
    "bank_account": "0012345",
    "note": "call with Bearer abcdefghijklmnop please",
    "amount": 1200,
}


def test_sensitive_inputs_are_masked_in_the_log_and_in_errors(keiri_home: Path) -> None:
    plan = make_plan(
        node("ok", value=SENSITIVE, label="ok"),
        node("bad", value=SENSITIVE, label="bad", fail_times=5),
        on_error="continue",
    )
    result = make_runner(keiri_home / "runs").start(plan)

    logged = events(result, "node_complete")[0]["outputs"]["value"]
    snapshot = result.errors[0]["input_snapshot"]["value"]
    logged_snapshot = events(result, "node_error")[0]["error"]["input_snapshot"]["value"]
    for shown in (logged, snapshot, logged_snapshot):
        for key in ("password", "api_key", "access_token", "マイナンバー", "bank_account"):
            assert shown[key] == MASK, (key, shown)
        assert shown["note"] == f"call with {MASK} please"
        assert shown["amount"] == 1200  # ordinary values stay readable
    log_text = result.log_path.read_text(encoding="utf-8")
    for value in ("hunter2-plain", "plain-api-key", "plain-token", "123456789012", "0012345"):
        assert value not in log_text


def test_error_details_and_messages_are_masked_without_losing_their_shape() -> None:
    error = {
        "code": "API_ERROR",
        "message": "401 for key sk-abcdefghijklmnopqrstuvwx",
        "details": {
            "node_id": "n",
            "problems": [f"problem {i}" for i in range(8)],
            "headers": {"Authorization": "Basic dXNlcjpwYXNz", "x-request": "r1"},
            "token": None,
        },
    }
    masked = mask_secrets(error)
    assert masked["message"] == f"401 for key {MASK}"
    assert masked["details"]["headers"] == {"Authorization": MASK, "x-request": "r1"}
    assert masked["details"]["problems"] == error["details"]["problems"]  # not summarised
    assert masked["details"]["token"] is None
    assert error["message"].endswith("uvwx")  # the input is not changed


def test_token_secrets_are_masked_but_token_counts_are_not() -> None:
    usage = {"access_token": "abc123", "refresh_token": "r", "total_tokens": 812, "max_tokens": 64}
    assert mask_secrets(usage) == {
        "access_token": MASK,
        "refresh_token": MASK,
        "total_tokens": 812,
        "max_tokens": 64,
    }


def test_bytes_are_summarised_in_the_log() -> None:
    assert sanitize({"data": b"\x00" * 300}) == {"data": "<bytes 300>"}


# ------------------------------------------------------------------------------ uploads


def test_uploaded_files_stay_in_memory_and_out_of_the_log(
    keiri_home: Path, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    temp_root = tmp_path_factory.mktemp("system_temp")
    monkeypatch.setattr(tempfile, "tempdir", str(temp_root))
    payload = b"UPLOADED-PAYLOAD-" + bytes(range(256)) * 4
    zip_bytes = _make_zip({"A/x.bin": payload, "A/memo.txt": b"memo", "B/y.txt": b"hello"})
    plan = load_plan_file(SAMPLE_PLANS / "evidence_summary.yaml")
    runner = make_runner(keiri_home / "runs")

    paused = runner.start(plan)
    result = runner.resume(
        paused.run_id,
        answers={"collect_zip": {"evidence_zip": {"name": "e.zip", "data": zip_bytes}}},
    )

    assert result.status == "success", result.errors
    assert list(temp_root.iterdir()) == []  # nothing went through a temporary area either
    assert result.state_path is not None
    # the run state keeps the upload (resume from another process), readable by its owner
    # only; no other file holds it, raw or base64
    encoded = base64.b64encode(zip_bytes)
    assert _files_containing(keiri_home, encoded) == [result.state_path]
    assert _files_containing(keiri_home, zip_bytes[:64]) == []
    assert _files_containing(keiri_home, b"UPLOADED-PAYLOAD-") == []
    if sys.platform != "win32":
        assert stat.S_IMODE(result.state_path.stat().st_mode) == 0o600
    log_text = result.log_path.read_text(encoding="utf-8")
    assert f"<bytes {len(zip_bytes)}>" in log_text


def test_reading_an_archive_writes_nothing_even_when_it_fails(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    tmp_path = tmp_path_factory.mktemp("empty")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    archive = read_zip_2tier(_make_zip({"A/a.txt": b"a", "B/b.txt": b"b"}))
    assert [group.name for group in archive.groups] == ["A", "B"]
    with pytest.raises(ArchiveError):
        read_zip_2tier(_make_zip({"../evil.txt": b"x"}))
    with pytest.raises(ArchiveError):
        read_zip_2tier(b"not a zip at all")
    assert list(tmp_path.iterdir()) == []


# ------------------------------------------------------------------------------ paths


@pytest.mark.parametrize(
    "plan_id", ["../../etc/passwd", "/etc/passwd", "a/../../b", "..", "C:/x", "a\\..\\b", ""]
)
def test_plan_ids_cannot_leave_designs(tmp_path: Path, plan_id: str) -> None:
    store = PlanStore(tmp_path / "designs")
    with pytest.raises(UserInputError) as caught:
        store.load(plan_id)
    assert caught.value.code == "PLAN_PATH"


@pytest.mark.skipif(sys.platform == "win32", reason="symbolic links need privileges")
def test_a_symlink_out_of_designs_is_refused(tmp_path: Path) -> None:
    designs = tmp_path / "designs"
    designs.mkdir()
    (tmp_path / "outside.yaml").write_text("id: x\n", encoding="utf-8")
    (designs / "link.yaml").symlink_to(tmp_path / "outside.yaml")
    store = PlanStore(designs)
    with pytest.raises(UserInputError) as caught:
        store.load("link")
    assert caught.value.code == "PLAN_PATH"
    assert [entry.file_id for entry in store.list()] == []


@pytest.mark.parametrize("run_id", ["../x", "run_1/../../y", "*", ""])
def test_run_ids_are_checked_before_touching_the_disk(tmp_path: Path, run_id: str) -> None:
    with pytest.raises(UserInputError, match=r"実行 ID .* の形式が正しくありません"):
        find_state(tmp_path, run_id)


def test_run_logs_stay_under_runs_dir_whatever_the_plan_id(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    for plan_id in ("../../etc/passwd", "/abs/plan", "a/../../b"):
        path = log_path_for(runs, plan_id, "run_1").resolve()
        assert path.is_relative_to(runs.resolve()), path
