"""Loading a large CSV: encoding from a prefix confirmed by the parse, no decoded copy.

The encoding is detected from the file's first MiB (``textcodec.PREFIX_BYTES``); a
decode error later in the file retries the next encoding, so the result is the one a
decode of the whole file gives. The file is read in chunks, never held as one ``str``.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import tracemalloc
import types
from pathlib import Path

import pandas as pd
import pytest

from keiri_agent.agents.analysis.datasets import DatasetRegistry, memory
from keiri_agent.agents.analysis.datasets import registry as registry_module
from keiri_agent.errors import DatasetError
from keiri_agent.textcodec import PREFIX_BYTES

HEADER = "伝票番号,地域,売上\n"


def _rows(count: int, region: str = "関東", start: int = 0) -> str:
    return "".join(f"{start + n},{region},{n * 10}\n" for n in range(count))


def _ascii_rows_beyond_prefix() -> str:
    rows = _rows(PREFIX_BYTES // 12, region="KANTO")  # ~1.3 MiB of ASCII
    assert len(rows) > PREFIX_BYTES
    return rows


@pytest.fixture
def registry() -> DatasetRegistry:
    return DatasetRegistry(max_bytes=200 * 2**20)


def test_cp932_after_the_prefix_is_read_as_cp932(registry: DatasetRegistry, tmp_path: Path) -> None:
    path = tmp_path / "売上.csv"
    path.write_bytes((HEADER + _ascii_rows_beyond_prefix() + "999999,九州,5\n").encode("cp932"))
    frame = registry.get(registry.load_path(path))
    assert frame["地域"].iloc[-1] == "九州"
    assert list(frame.columns) == ["伝票番号", "地域", "売上"]
    assert frame["売上"].iloc[-1] == 5


def test_bytes_upload_with_cp932_after_the_prefix(registry: DatasetRegistry) -> None:
    data = (HEADER + _ascii_rows_beyond_prefix() + "999999,㈱九州,5\n").encode("cp932")
    frame = registry.get(registry.load_bytes(data, "売上.csv"))
    assert frame["地域"].iloc[-1] == "㈱九州"


def test_a_nul_byte_after_the_prefix_is_binary(registry: DatasetRegistry, tmp_path: Path) -> None:
    path = tmp_path / "売上.csv"
    path.write_bytes((HEADER + _ascii_rows_beyond_prefix()).encode() + b"1,\x00,2\n")
    with pytest.raises(DatasetError, match="文字として読めません"):
        registry.load_path(path)


def test_bytes_in_no_encoding_after_the_prefix_are_refused(
    registry: DatasetRegistry, tmp_path: Path
) -> None:
    path = tmp_path / "売上.csv"
    path.write_bytes((HEADER + _ascii_rows_beyond_prefix()).encode("cp932") + b"1,\x82\xff,2\n")
    with pytest.raises(DatasetError, match="文字として読めません"):
        registry.load_path(path)


def test_a_column_that_turns_to_text_late_is_read_as_one_column(
    registry: DatasetRegistry, tmp_path: Path
) -> None:
    """Chunked parsing would mix numbers and text: the column is all text, as one parse reads it."""
    lines = "".join(f"{n},0{n % 7},{n}\n" for n in range(400_000)) + "400000,A-1,1\n"
    path = tmp_path / "codes.csv"
    path.write_text("id,code,amount\n" + lines, encoding="utf-8")
    frame = registry.get(registry.load_path(path))
    whole = pd.read_csv(path, low_memory=False)
    assert frame["code"].tolist() == whole["code"].tolist()
    assert all(isinstance(value, str) for value in frame["code"].head(3))


def test_total_rows_are_numbered_in_a_file_read_from_disk(
    registry: DatasetRegistry, tmp_path: Path
) -> None:
    path = tmp_path / "売上.csv"
    text = "売上一覧\n" + HEADER + _rows(3) + "合計,,30\n"
    path.write_bytes(text.encode("cp932"))
    dataset_id = registry.load_path(path)
    assert len(registry.get(dataset_id)) == 3
    notes = " ".join(registry.summary(dataset_id)["notes"])
    assert "6行目" in notes or "6 行目" in notes, notes


def _traced_peak(load: object) -> int:
    tracemalloc.start()
    try:
        load()  # type: ignore[operator]
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_large_csv_is_never_decoded_whole(registry: DatasetRegistry, tmp_path: Path) -> None:
    """Python allocations while loading stay within 4× pandas' own (with a decoded copy: ~7×).

    (Allocations outside Python, such as Arrow's buffers, are not traced.)
    """
    path = tmp_path / "売上.csv"
    rows = "".join(f"{n},関東,{n}\n" for n in range(400_000))
    path.write_bytes((HEADER + rows).encode("cp932"))
    pandas_peak = _traced_peak(lambda: pd.read_csv(path, encoding="cp932"))
    ours = _traced_peak(lambda: registry.load_path(path))
    assert ours < 4 * pandas_peak, (ours, pandas_peak)


def test_loading_returns_freed_memory_before_cleaning_and_summary(
    registry: DatasetRegistry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[str] = []
    monkeypatch.setattr(registry_module, "release_free_memory", lambda: calls.append("trim"))
    path = tmp_path / "sales.csv"
    path.write_text("地域,売上\n関東,100\n関西,200\n", encoding="utf-8")
    registry.load_path(path)
    assert calls == ["trim", "trim"]


@pytest.mark.parametrize("library", [None, "libc-without-trim"])
def test_release_free_memory_is_a_no_op_without_malloc_trim(
    monkeypatch: pytest.MonkeyPatch, library: str | None
) -> None:
    memory._malloc_trim.cache_clear()
    monkeypatch.setattr(ctypes.util, "find_library", lambda name: library)
    monkeypatch.setattr(ctypes, "CDLL", lambda name: types.SimpleNamespace())
    try:
        memory.release_free_memory()  # musl, macOS: nothing to call, no error
        assert memory._malloc_trim() is None
    finally:
        memory._malloc_trim.cache_clear()
