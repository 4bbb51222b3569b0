"""services.knowledge: indexing from paths, uploaded bytes and the sample, with progress."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from keiri_agent.agents.helpdesk.desk import MANUAL, QA, HelpDesk
from keiri_agent.config import Settings
from keiri_agent.errors import UserInputError
from keiri_agent.services.knowledge import TEMP_PREFIX, index_knowledge

MANUAL_MD = "# 経費精算\n\n## 締め日\n\n経費精算の締め日は毎月25日です。\n".encode()
FAQ_CSV = "質問,回答\n締め日はいつ?,毎月25日です。\n".encode()


def _temporary_folders() -> set[Path]:
    return set(Path(tempfile.gettempdir()).glob(f"{TEMP_PREFIX}*"))


def test_uploads_are_indexed_under_their_names_and_the_temporary_folder_is_removed(
    tmp_path: Path,
) -> None:
    before = _temporary_folders()
    on_disk = tmp_path / "規程.md"
    on_disk.write_bytes(MANUAL_MD.replace(b"25", b"20"))
    progress: list[tuple[int, int, str]] = []
    desk = HelpDesk(Settings())

    reports = index_knowledge(
        desk,
        documents=[on_disk],
        uploads=[("経費.md", MANUAL_MD), ("folder/broken.pdf", b"not a pdf")],
        qa_uploads=[("faq.csv", FAQ_CSV)],
        on_progress=lambda done, total, name: progress.append((done, total, name)),
    )

    assert set(reports[MANUAL].added) == {"規程.md", "経費.md"}
    assert [failure.document for failure in reports[MANUAL].failed] == ["broken.pdf"]
    assert reports[QA].added == ["faq.csv"]
    assert set(desk.knowledge_base.documents(MANUAL)) == {"規程.md", "経費.md"}
    assert (3, 3, "broken.pdf") in progress and (1, 1, "faq.csv") in progress
    assert _temporary_folders() == before  # nothing left behind
    hits = desk.knowledge_base.keyword(MANUAL).search("締め日", 5)
    assert any("25日" in hit.text for hit in hits)


def test_two_uploads_with_one_name_are_a_clash_not_an_overwrite() -> None:
    before = _temporary_folders()
    with pytest.raises(UserInputError) as caught:
        index_knowledge(HelpDesk(Settings()), uploads=[("a.md", b"# A\n"), ("a.md", b"# B\n")])
    assert caught.value.code == "DOCUMENT_NAME_CLASH"
    assert _temporary_folders() == before


def test_the_sample_and_nothing_at_all() -> None:
    desk = HelpDesk(Settings())
    reports = index_knowledge(desk, sample=True)
    assert "xyz_manual.pdf" in reports[MANUAL].added and reports[QA].added == ["xyz_faq.csv"]
    again = index_knowledge(desk, sample=True)
    assert again[MANUAL].added == [] and "xyz_manual.pdf" in again[MANUAL].unchanged
    with pytest.raises(UserInputError, match="登録する文書が指定されていません"):
        index_knowledge(desk)
    with pytest.raises(UserInputError, match="名前"):
        index_knowledge(desk, uploads=[("..", b"x")])
