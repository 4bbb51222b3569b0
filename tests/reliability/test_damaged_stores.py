"""Damaged stores on disk: each fault → what used to happen → what happens now.

* ``checkpoints.db`` (the analysis conversations, ``.keiri/checkpoints.db``) truncated,
  overwritten with random bytes, or holding tables of another shape → ``analyze`` ended
  in a ``sqlite3.DatabaseError`` / ``OperationalError`` traceback (exit 0!) → now
  ``STORE_CORRUPT`` naming the file, with "move it aside" as the fix (exit 1); the file
  is left where it is. Damage found only when a conversation is read (a truncated tail)
  is the same error. A zero-length file is an empty database: conversations start in it.
* A keyword index entry missing a field, of the wrong type, or a truncated
  ``index.json`` → ``KeyError`` / ``TypeError`` tracebacks in ``helpdesk status``,
  ``ask`` and ``index`` → now ``KNOWLEDGE_BASE_CORRUPT`` naming the file and the folder
  to delete before indexing again (the same for a manifest entry missing a field).
* The local Qdrant folder (the FAQ's vectors) with a garbage or truncated ``meta.json``,
  a ``meta.json`` of the wrong shape, or a garbage collection SQLite file →
  ``UnicodeDecodeError`` / ``JSONDecodeError`` / ``AttributeError`` /
  ``sqlite3.DatabaseError`` tracebacks → now ``KNOWLEDGE_BASE_CORRUPT`` naming the folder.
* A kill between saving a document's keyword chunks and its manifest entry →
  ``status`` counted fewer documents than search found, until re-indexing → now the
  manifest is the record: the left-over chunks are not searched, ``status`` names the
  interrupted document(s), and the next ``index`` adds them.
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from keiri_agent.cli.app import app
from keiri_agent.config import Settings
from keiri_agent.errors import KeiriAgentError
from keiri_agent.search.knowledge_base import KnowledgeBase
from keiri_agent.storage import open_checkpointer

runner = CliRunner()


# --- checkpoints.db ---------------------------------------------------------------------


def _data(folder: Path) -> Path:
    path = folder / "data.csv"
    path.write_text("地域,売上\n関東,100\n近畿,250\n", encoding="utf-8")
    return path


def _good_database(home: Path, rows: int = 1) -> Path:
    """A checkpoint database written by the saver itself (``rows`` large checkpoints)."""
    with open_checkpointer(Settings(home=home)) as saver:
        connection = saver.conn  # type: ignore[attr-defined]
        for number in range(rows):
            connection.execute(
                "INSERT INTO checkpoints VALUES (?, '', ?, NULL, 'msgpack', ?, ?)",
                ("thread", f"c{number:05d}", os.urandom(2000), b"{}"),
            )
        connection.commit()
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return home / ".keiri" / "checkpoints.db"


def _garbage(file: Path) -> None:
    file.write_bytes(os.urandom(8192))


def _truncated_header(file: Path) -> None:
    file.write_bytes(file.read_bytes()[:3000])


def _wrong_schema(file: Path) -> None:
    file.unlink()
    connection = sqlite3.connect(file)
    connection.execute("CREATE TABLE checkpoints (x INTEGER)")
    connection.execute("CREATE TABLE writes (y TEXT)")
    connection.commit()
    connection.close()


@pytest.mark.parametrize("damage", [_garbage, _truncated_header, _wrong_schema])
def test_analyze_with_a_damaged_checkpoint_database_is_a_clear_error(
    damage, keiri_home: Path
) -> None:
    file = _good_database(keiri_home)
    damage(file)
    before = file.read_bytes()
    result = runner.invoke(app, ["analyze", str(_data(keiri_home)), "地域別の売上の合計"])
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "STORE_CORRUPT" in result.stderr
    assert str(file) in result.stderr.replace("\n", "")
    assert "移動" in result.stderr
    assert "Traceback" not in result.output
    assert file.read_bytes() == before  # never deleted or "repaired" for the user


def test_analyze_json_keeps_the_machine_code(keiri_home: Path) -> None:
    _garbage(_good_database(keiri_home))
    result = runner.invoke(app, ["analyze", str(_data(keiri_home)), "合計", "--json"])
    assert result.exit_code == 1
    assert "[STORE_CORRUPT]" in result.stderr


def test_damage_found_while_reading_a_conversation_is_the_same_error(keiri_home: Path) -> None:
    file = _good_database(keiri_home, rows=400)
    data = bytearray(file.read_bytes())
    half = len(data) // 2
    data[half:] = os.urandom(len(data) - half)  # the schema pages are intact, the rows not
    file.write_bytes(bytes(data))
    with (
        open_checkpointer(Settings(home=keiri_home)) as saver,
        pytest.raises(KeiriAgentError) as caught,
    ):
        list(saver.list({"configurable": {"thread_id": "thread"}}))
    assert caught.value.code == "STORE_CORRUPT"
    assert caught.value.details["path"] == str(file)


def test_a_zero_length_checkpoint_database_is_an_empty_one(keiri_home: Path) -> None:
    file = keiri_home / ".keiri" / "checkpoints.db"
    file.parent.mkdir(parents=True)
    file.write_bytes(b"")
    result = runner.invoke(app, ["analyze", str(_data(keiri_home)), "地域別の売上の合計"])
    assert result.exit_code == 0, result.output
    assert file.stat().st_size > 0


# --- the HelpDesk knowledge base -----------------------------------------------------


def _manuals(folder: Path, count: int = 2) -> Path:
    docs = folder / "docs"
    docs.mkdir()
    for number in range(1, count + 1):
        (docs / f"manual{number}.md").write_text(
            f"# 手順{number}\n\n経費精算の締め日は毎月{number}日です。承認ルートを確認します。\n",
            encoding="utf-8",
        )
    return docs


def _collection(home: Path) -> Path:
    return home / ".keiri" / "knowledge" / "helpdesk" / "manual"


def _edit_json(file: Path, change) -> None:
    data = json.loads(file.read_text(encoding="utf-8"))
    change(data)
    file.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")


def _chunk_without_terms(home: Path) -> None:
    _edit_json(_collection(home) / "keyword" / "index.json", lambda d: d["chunks"][0].pop("terms"))


def _chunk_of_the_wrong_type(home: Path) -> None:
    def change(data):
        data["chunks"][0]["source"] = "manual1.md"

    _edit_json(_collection(home) / "keyword" / "index.json", change)


def _truncated_index(home: Path) -> None:
    file = _collection(home) / "keyword" / "index.json"
    file.write_bytes(file.read_bytes()[:100])


def _manifest_entry_without_chunks(home: Path) -> None:
    _edit_json(
        _collection(home) / "manifest.json",
        lambda d: d["documents"]["manual1.md"].pop("chunks"),
    )


DAMAGES = [_chunk_without_terms, _chunk_of_the_wrong_type, _truncated_index,
           _manifest_entry_without_chunks]  # fmt: skip


@pytest.mark.parametrize("damage", DAMAGES)
@pytest.mark.parametrize(
    "command", [["status"], ["status", "--json"], ["ask", "締め日は?"], ["index", "DOCS"]]
)
def test_a_damaged_knowledge_base_is_a_clear_error(
    damage, command: list[str], keiri_home: Path
) -> None:
    docs = _manuals(keiri_home)
    assert runner.invoke(app, ["helpdesk", "index", str(docs)]).exit_code == 0
    damage(keiri_home)
    args = [str(docs) if part == "DOCS" else part for part in command]
    result = runner.invoke(app, ["helpdesk", *args])
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert "KNOWLEDGE_BASE_CORRUPT" in result.stderr
    assert str(_collection(keiri_home)) in result.stderr.replace("\n", "")
    assert "削除" in result.stderr


def test_a_kill_between_the_chunks_and_the_manifest_leaves_status_consistent(
    keiri_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The worst point: the keyword chunks of the 2nd document are saved, its manifest
    entry is not (the process dies in ``save_manifest``)."""
    docs = _manuals(keiri_home, count=3)
    from keiri_agent.search import knowledge_base

    real_save = knowledge_base._Collection.save_manifest

    def dying_save(self) -> None:
        if "manual2.md" in self.manifest:
            raise KeyboardInterrupt  # killed here
        real_save(self)

    monkeypatch.setattr(knowledge_base._Collection, "save_manifest", dying_save)
    with pytest.raises(KeyboardInterrupt):
        KnowledgeBase.for_workspace(Settings(home=keiri_home)).index_files([docs])
    monkeypatch.setattr(knowledge_base._Collection, "save_manifest", real_save)

    status = runner.invoke(app, ["helpdesk", "status", "--json"])
    assert status.exit_code == 0, status.output
    data = json.loads(status.stdout)
    manual = data["stats"]["manual"]
    assert set(data["documents"]["manual"]) == {"manual1.md"}
    assert manual["documents"] == 1
    assert manual["interrupted"] == ["manual2.md"]
    # what status reports is what search sees
    keyword = KnowledgeBase.for_workspace(Settings(home=keiri_home)).keyword("manual")
    assert keyword.documents() == {"manual1.md"}
    assert manual["chunks"] == len(keyword)
    text = runner.invoke(app, ["helpdesk", "status"])
    assert "manual2.md" in text.stdout and "index" in text.stdout

    again = runner.invoke(app, ["helpdesk", "index", str(docs), "--json"])
    assert again.exit_code == 0, again.output
    report = json.loads(again.stdout)["manual"]
    assert sorted(report["added"]) == ["manual2.md", "manual3.md"]
    assert report["unchanged"] == ["manual1.md"]
    final = json.loads(runner.invoke(app, ["helpdesk", "status", "--json"]).stdout)
    assert final["stats"]["manual"]["documents"] == 3
    assert final["stats"]["manual"]["interrupted"] == []


def test_a_lost_keyword_index_is_rebuilt_by_the_next_index(keiri_home: Path) -> None:
    """Manifest entries whose chunks are missing from the keyword index are not skipped
    as "unchanged" (they used to stay unsearchable until the file changed)."""
    docs = _manuals(keiri_home)
    assert runner.invoke(app, ["helpdesk", "index", str(docs)]).exit_code == 0
    (_collection(keiri_home) / "keyword" / "index.json").unlink()
    again = runner.invoke(app, ["helpdesk", "index", str(docs), "--json"])
    assert again.exit_code == 0, again.output
    assert sorted(json.loads(again.stdout)["manual"]["updated"]) == ["manual1.md", "manual2.md"]
    keyword = KnowledgeBase.for_workspace(Settings(home=keiri_home)).keyword("manual")
    assert keyword.documents() == {"manual1.md", "manual2.md"}


# --- the local vector index (Qdrant folder) --------------------------------------------


def _vector_folder(tmp_path: Path) -> Path:
    from langchain_core.embeddings import DeterministicFakeEmbedding

    from keiri_agent.search.models import Chunk, Source
    from keiri_agent.search.vector import VectorIndex, _release_local

    folder = tmp_path / "qdrant"
    index = VectorIndex("kb-qa", DeterministicFakeEmbedding(size=8), path=folder)
    index.upsert("faq.csv", [Chunk("faq.csv#1", "締め日", Source("faq.csv", row=1))])
    index.close()
    if index._local_key is not None:
        _release_local(index._local_key)
    return folder


@pytest.mark.parametrize(
    "damage",
    [
        lambda folder: (folder / "meta.json").write_bytes(os.urandom(100)),
        lambda folder: (folder / "meta.json").write_bytes((folder / "meta.json").read_bytes()[:20]),
        lambda folder: (folder / "meta.json").write_text('{"collections": {"kb-qa": 3}}'),
        lambda folder: (folder / "collection" / "kb-qa" / "storage.sqlite").write_bytes(
            os.urandom(5000)
        ),
    ],
    ids=["meta-garbage", "meta-truncated", "meta-shape", "sqlite-garbage"],
)
def test_a_damaged_local_vector_folder_is_a_clear_error(damage, tmp_path: Path) -> None:
    from langchain_core.embeddings import DeterministicFakeEmbedding

    from keiri_agent.search.vector import VectorIndex

    folder = _vector_folder(tmp_path)
    damage(folder)
    with pytest.raises(KeiriAgentError) as caught:
        VectorIndex("kb-qa", DeterministicFakeEmbedding(size=8), path=folder)
    assert caught.value.code == "KNOWLEDGE_BASE_CORRUPT"
    assert str(folder) in (caught.value.hint or "")
