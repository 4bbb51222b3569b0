"""Saved analysis files: a reference per upload, prune of old copies no conversation uses."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from keiri_agent.config import Settings
from keiri_agent.services.saved_datasets import PRUNE_AFTER, SavedDatasetError, SavedDatasets
from keiri_agent.workspace import Workspace

DAY = 24 * 3600


def _age(saved: SavedDatasets, ref: str, days: float) -> None:
    then = time.time() - days * DAY
    for path in [saved.folder / ref, *(saved.folder / ref).iterdir()]:
        os.utime(path, (then, then))


@pytest.fixture
def saved(tmp_path: Path) -> SavedDatasets:
    return SavedDatasets(Workspace.from_settings(Settings(home=tmp_path, provider="offline")))


def test_old_unreferenced_copies_are_pruned_and_a_conversation_keeps_its_file(
    saved: SavedDatasets,
) -> None:
    used = saved.save(b"a,b\n1,2\n", "used.csv", sheet=None, keep_total_rows=False)
    old = saved.save(b"a,b\n3,4\n", "old.csv", sheet=None, keep_total_rows=False)
    fresh = saved.save(b"a,b\n5,6\n", "fresh.csv", sheet=None, keep_total_rows=False)
    saved.link("thread1", used)
    days = PRUNE_AFTER.days + 1
    _age(saved, used, days)
    _age(saved, old, days)
    _age(saved, fresh, PRUNE_AFTER.days - 1)
    broken = saved.folder / "0123456789abcdef"  # damaged: no meta.json
    broken.mkdir()
    (broken / "data").write_bytes(b"x")
    _age(saved, broken.name, days)

    assert sorted(saved.prune()) == sorted([old, broken.name])
    assert saved.load(used).name == "used.csv", "a conversation's file is never pruned"
    assert saved.load(fresh).name == "fresh.csv", "a recent copy is kept"
    with pytest.raises(SavedDatasetError):
        saved.load(old)
    assert saved.ref_of("thread1") == used


def test_saving_a_file_again_makes_it_recent(saved: SavedDatasets) -> None:
    ref = saved.save(b"a,b\n1,2\n", "again.csv", sheet=None, keep_total_rows=False)
    _age(saved, ref, PRUNE_AFTER.days + 1)
    assert saved.save(b"a,b\n1,2\n", "again.csv", sheet=None, keep_total_rows=False) == ref
    assert saved.prune() == []
    assert saved.load(ref).name == "again.csv"


def test_prune_of_an_empty_workspace_does_nothing(saved: SavedDatasets) -> None:
    assert saved.prune() == []
