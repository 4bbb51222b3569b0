"""Hostile or mistaken command-line input (issue 30): each used to end in a traceback or
an English message.

- ``plan rerun --inputs <missing>`` → 「answers file not found: …」 (English) → now
  「回答ファイル … が見つかりません」 with a fix.
- ``plan generate --out <existing folder>`` → ``IsADirectoryError`` traceback → now a
  Japanese usage error before anything is generated (and a write failure prints the YAML
  instead of losing it).
- ``--instruction`` holding bytes that are not UTF-8 → ``UnicodeEncodeError`` traceback
  → now one Japanese line naming the argument (exit 2).
- Any exception no command expected → a traceback → now one Japanese line
  (``UNEXPECTED_ERROR``) with the traceback shown only with ``-v``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from keiri_agent.cli.app import app

runner = CliRunner()


def test_plan_rerun_with_a_missing_inputs_file_answers_in_japanese(tmp_path: Path) -> None:
    missing = tmp_path / "answers.yaml"
    result = runner.invoke(
        app, ["plan", "rerun", "run_000000000000", "--from", "x", "--inputs", str(missing)]
    )
    assert result.exit_code == 1, result.output
    assert "回答ファイル" in result.stderr and "見つかりません" in result.stderr
    assert "not found" not in result.stderr and "Traceback" not in result.output


def test_plan_generate_out_being_a_folder_is_refused_in_japanese(tmp_path: Path) -> None:
    folder = tmp_path / "plans"
    folder.mkdir()
    result = runner.invoke(
        app,
        [
            "plan",
            "generate",
            "--instruction",
            "売上CSVを部門別に集計してExcelに出力する",
            "--out",
            str(folder),
        ],
    )
    output = result.output + result.stderr
    assert (result.exit_code != 0 and result.exception is None) or isinstance(
        result.exception, SystemExit
    ), output
    assert "フォルダ" in result.stderr and "Traceback" not in output
    assert list(folder.iterdir()) == []


def test_an_instruction_with_invalid_utf8_bytes_is_a_clear_error(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    script = Path(sys.executable).with_name("keiri-agent")
    env = {k: v for k, v in os.environ.items() if not k.startswith("KEIRI_AGENT_")}
    env |= {"KEIRI_AGENT_HOME": str(tmp_path), "KEIRI_AGENT_PROVIDER": "offline"}
    done = subprocess.run(
        [str(script).encode(), b"plan", b"generate", b"--instruction", b"\xff\xfe\x8b\x8c"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        timeout=120,
    )
    output = (done.stdout + done.stderr).decode("utf-8", errors="replace")
    assert done.returncode in (1, 2), output
    assert "Traceback" not in output and "UTF-8" in output


def test_an_unexpected_failure_is_one_japanese_line_not_a_traceback(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from keiri_agent.services import research

    def broken(self: object, *args: object, **kwargs: object) -> object:
        raise RuntimeError("boom in a library")

    monkeypatch.setattr(research.ResearchService, "sessions", broken)
    result = runner.invoke(app, ["research", "notes", "list"])
    assert result.exit_code == 1, result.output
    assert isinstance(result.exception, SystemExit)
    assert "UNEXPECTED_ERROR" in result.stderr and "予期しない" in result.stderr
    assert "RuntimeError" in result.stderr and "-v" in result.stderr
    assert "Traceback" not in result.output + result.stderr
