"""Files staged for a run: kept under generated names, read back, refused when gone or
named by a hostile manifest, deleted once the run has ended."""

from __future__ import annotations

from pathlib import Path

import pytest

from keiri_agent.errors import UserInputError
from keiri_agent.services.staged_uploads import StagedUploads
from keiri_agent.workspace import Workspace


@pytest.fixture
def staged(tmp_path: Path) -> StagedUploads:
    return StagedUploads(Workspace(tmp_path))


def test_files_come_back_as_given_and_go_when_discarded(staged: StagedUploads) -> None:
    uploads = [("../../etc/passwd.md", b"# a"), ("経費.csv", "日付,金額\n".encode("cp932"))]
    manifest = staged.stage("run_0123456789ab", uploads)
    assert [item["file"] for item in manifest] == ["000", "001"]  # never the user's name
    assert staged.load("run_0123456789ab", manifest) == uploads
    staged.discard("run_0123456789ab")
    assert not (staged.folder / "run_0123456789ab").exists()
    staged.discard("run_0123456789ab")  # nothing left: no error


@pytest.mark.parametrize("file", ["../run_other/000", "/etc/hostname", "", "00a"])
def test_a_manifest_naming_another_file_is_refused(staged: StagedUploads, file: str) -> None:
    """Even a file that exists (another run's upload) is not read through the manifest."""
    staged.stage("run_0123456789ab", [("a.md", b"x")])
    staged.stage("run_other", [("secret.md", b"another run's file")])
    with pytest.raises(UserInputError) as raised:
        staged.load("run_0123456789ab", [{"name": "a.md", "file": file}])
    assert raised.value.code == "UPLOAD_MISSING" and raised.value.hint


def test_a_file_gone_from_the_workspace_is_said_with_what_to_do(staged: StagedUploads) -> None:
    manifest = staged.stage("run_0123456789ab", [("a.md", b"x")])
    (staged.folder / "run_0123456789ab" / "000").unlink()
    with pytest.raises(UserInputError) as raised:
        staged.load("run_0123456789ab", manifest)
    assert "a.md" in raised.value.message and "アップロード" in (raised.value.hint or "")


def test_a_run_id_that_leads_elsewhere_is_refused(staged: StagedUploads) -> None:
    with pytest.raises(ValueError):
        staged.stage("../outside", [("a.md", b"x")])
