"""Symlinks in an indexed folder: attack → what used to happen → what happens now.

* ``helpdesk index docs/`` where ``docs/`` holds a link to a file outside it (a system
  file, a secret) → the target was read, indexed and quoted by ``helpdesk ask`` → now the
  link is skipped and listed in the index report (text and ``--json``), by the rule the
  ZIP/folder reader already used (``files.archive.walk_folder``, one rule for both).
* A link to a folder outside ``docs/`` → every file under it was indexed (and a link to
  an ancestor walked in circles) → now symlinked folders are never followed, reported.
* A link to a file inside ``docs/`` is still indexed (under the link's name).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from keiri_agent.cli.app import app
from keiri_agent.config import Settings
from keiri_agent.files.archive import read_folder_2tier
from keiri_agent.search.knowledge_base import KnowledgeBase

runner = CliRunner()
MARKER = "ひみつのあいことばZQX"


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    outside = tmp_path / "outside"
    (outside / "nested").mkdir(parents=True)
    (outside / "secret.md").write_text(f"# 秘密\n\n{MARKER} パスワード\n", encoding="utf-8")
    (outside / "nested" / "more.md").write_text(f"# 秘密2\n\n{MARKER}\n", encoding="utf-8")
    docs = tmp_path / "docs"
    (docs / "sub").mkdir(parents=True)
    (docs / "manual.md").write_text("# 手順\n\nパスワードは8文字以上です。\n", encoding="utf-8")
    (docs / "sub" / "inner.md").write_text("# 内部\n\n申請の手順です。\n", encoding="utf-8")
    (docs / "leak.md").symlink_to(outside / "secret.md")
    (docs / "linked_folder").symlink_to(outside, target_is_directory=True)
    (docs / "loop").symlink_to(docs, target_is_directory=True)
    (docs / "alias.md").symlink_to(docs / "sub" / "inner.md")
    return docs


def test_index_skips_links_leading_out_of_the_folder_and_reports_them(
    docs: Path, keiri_home: Path
) -> None:
    result = runner.invoke(app, ["helpdesk", "index", str(docs), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)["manual"]
    assert sorted(report["added"]) == ["alias.md", "inner.md", "manual.md"]
    assert sorted(skip["document"] for skip in report["skipped"]) == [
        "leak.md",
        "linked_folder",
        "loop",
    ]
    keyword = KnowledgeBase.for_workspace(Settings(home=keiri_home)).keyword("manual")
    assert all(MARKER not in chunk.text for chunk in keyword.chunks())

    answer = runner.invoke(app, ["helpdesk", "ask", "秘密のパスワード", "--json"])
    assert answer.exit_code == 0, answer.output
    assert MARKER not in answer.stdout

    text = runner.invoke(app, ["helpdesk", "index", str(docs)])
    assert "leak.md" in text.stdout and "スキップ" in text.stdout


def test_the_indexer_and_the_folder_reader_follow_one_rule(docs: Path, tmp_path: Path) -> None:
    archive = read_folder_2tier(docs)
    read = sorted(file.path for group in archive.groups for file in group.files)
    report = KnowledgeBase(tmp_path / "kb").index_files([docs])
    assert sorted(Path(p).name for p in read) == sorted(report.added)
    assert sorted(entry.path for entry in archive.skipped) == sorted(
        Path(skip.path).relative_to(docs).as_posix() for skip in report.skipped
    )
