"""The in-process dataset registry: uploaded files become DataFrames keyed by ``dataset_id``.

The UI (Streamlit, one thread per session) loads a file once; agents then refer to it
by ``dataset_id`` and read its cached summary every step. Loading reads the bytes
(``loading``), cleans names and converts text numbers and dates (``cleaning``) and
summarises the result once (``summary``, the contract agents use).
"""

from __future__ import annotations

import copy
import secrets
import threading
from pathlib import Path
from typing import Any

import pandas as pd

from keiri_agent.agents.analysis.datasets.cleaning import (
    clean_columns,
    convert_text_columns,
    normalize_frame,
)
from keiri_agent.agents.analysis.datasets.loading import (
    EXCEL_SUFFIXES,
    SUPPORTED_SUFFIXES,
    RowNumbers,
    dataset_error,
    read_excel,
    read_text_table,
)
from keiri_agent.agents.analysis.datasets.memory import release_free_memory
from keiri_agent.agents.analysis.datasets.summary import summarize
from keiri_agent.agents.analysis.datasets.totals import (
    find_total_rows,
    kept_totals_note,
    labelled_note,
    removed_note,
)
from keiri_agent.errors import UnknownDatasetError, unknown_choice_message


def _without_total_rows(
    frame: pd.DataFrame,
    row_numbers: RowNumbers,
    notes: list[str],
    column_notes: dict[str, list[str]],
    *,
    keep: bool,
) -> pd.DataFrame:
    """``frame`` (re-indexed from 0) without its total rows; ``notes`` say what was found.

    The text columns the total rows filled are converted again: a 日付 column whose
    total row reads 合計 becomes dates once that row is gone. A total row sums detail
    rows, so some always remain.
    """
    found = find_total_rows(frame)
    labels = list(frame.index)
    if found.removed:
        numbers = row_numbers([labels[position] for position in found.removed])
        if keep:
            notes.append(kept_totals_note(numbers))
        else:
            notes.append(removed_note(numbers))
            totals = frame.iloc[found.removed]
            frame = frame.drop(index=[labels[position] for position in found.removed])
            filled = [
                column
                for column in frame.columns
                if pd.api.types.is_string_dtype(frame[column].dtype)
                and totals[column].notna().any()
            ]
            frame, converted_notes = convert_text_columns(frame, filled)
            column_notes.update(converted_notes)
    if found.kept:
        notes.append(labelled_note(row_numbers([labels[position] for position in found.kept])))
    return frame.reset_index(drop=True)


class DatasetRegistry:
    """Thread-safe map ``dataset_id -> DataFrame`` with a summary cached at load time.

    ``get`` returns a shallow copy (pandas Copy-on-Write makes it cheap and keeps the
    registered frame safe from a caller's edits). Parsing runs outside the lock.
    """

    def __init__(self, *, max_bytes: int) -> None:
        """Create an empty registry.

        Args:
            max_bytes: largest file accepted (the surface passes
                ``Settings.inputs.max_upload_mb`` MiB; the registry reads no settings itself).
        """
        self.max_bytes = max_bytes
        self._lock = threading.RLock()
        self._frames: dict[str, pd.DataFrame] = {}
        self._summaries: dict[str, dict[str, Any]] = {}

    def load_bytes(
        self,
        data: bytes,
        name: str,
        *,
        sheet: str | int | None = None,
        keep_total_rows: bool = False,
    ) -> str:
        """Parse an uploaded file (format from ``name``'s suffix) and register it.

        Total rows (合計, 小計 … whose numbers are sums, see ``totals``) are excluded
        with a note unless ``keep_total_rows``.

        Args:
            data: the file's bytes.
            name: the file name; its suffix picks the format.
            sheet: for Excel, a sheet name or 0-based index (default: first sheet).
            keep_total_rows: keep the sheet's total rows as data (noted).

        Returns:
            The new dataset_id (``ds_`` + 8 hex digits).

        Raises:
            DatasetError: unsupported suffix, empty, too large, undecodable or unparsable.
        """
        return self._load(data, len(data), name, sheet=sheet, keep_total_rows=keep_total_rows)

    def _load(
        self,
        source: bytes | Path,
        size: int,
        name: str,
        *,
        sheet: str | int | None,
        keep_total_rows: bool,
    ) -> str:
        """``load_bytes`` of the bytes, or of a file a CSV is read from in chunks."""
        suffix = Path(name).suffix.lower()
        if suffix not in SUPPORTED_SUFFIXES:
            raise dataset_error(
                f"「{name}」の形式（{suffix or '拡張子なし'}）は読み込めません。"
                "読み込める形式: " + ", ".join(SUPPORTED_SUFFIXES),
                "データを CSV（UTF-8 または Shift_JIS）、TSV、Excel（.xlsx）で保存して"
                "アップロードしてください。",
                supported=list(SUPPORTED_SUFFIXES),
            )
        self._check_size(size, name)
        if suffix in EXCEL_SUFFIXES:
            data = source if isinstance(source, bytes) else source.read_bytes()
            if not data or data.isspace():
                raise dataset_error(
                    f"「{name}」は空のファイルです。",
                    "見出しの行とデータの行が入ったファイルをアップロードしてください。",
                )
            frame, notes, row_numbers = read_excel(data, name, sheet)
        else:  # the loader checks emptiness on the decoded text
            frame, notes, row_numbers = read_text_table(source, name, suffix)
        release_free_memory()  # the parser's buffers: later stages then start lower
        frame, column_notes = normalize_frame(frame, name)
        frame = _without_total_rows(frame, row_numbers, notes, column_notes, keep=keep_total_rows)
        release_free_memory()  # the cleaning's intermediate strings, before the summary
        return self._register(frame, name, notes=notes, column_notes=column_notes)

    def load_path(
        self, path: str | Path, *, sheet: str | int | None = None, keep_total_rows: bool = False
    ) -> str:
        """Load a file from disk (CLI and tests); see ``load_bytes``."""
        file = Path(path)
        try:
            size = file.stat().st_size
        except OSError as exc:
            raise dataset_error(
                f"「{file}」を読めません（{exc.strerror}）。",
                "ファイルの場所と名前が正しいかを確認してください。",
            ) from exc
        self._check_size(size, file.name)
        return self._load(file, size, file.name, sheet=sheet, keep_total_rows=keep_total_rows)

    def add_frame(self, df: pd.DataFrame, name: str) -> str:
        """Register an existing DataFrame (column names are cleaned, values kept)."""
        if len(df.columns) == 0 or len(df) == 0:
            raise dataset_error(
                f"{name!r} has no {'columns' if len(df.columns) == 0 else 'rows'}",
                "register a frame with at least one column and one row",
            )
        return self._register(clean_columns(df), name)

    def get(self, dataset_id: str) -> pd.DataFrame:
        """The DataFrame (a cheap Copy-on-Write shallow copy); UnknownDatasetError if absent."""
        with self._lock:
            frame = self._frames.get(dataset_id)
            if frame is None:
                raise self._unknown(dataset_id)
            return frame.copy(deep=False)

    def summary(self, dataset_id: str) -> dict[str, Any]:
        """The summary computed at load time (a copy; safe to modify)."""
        with self._lock:
            cached = self._summaries.get(dataset_id)
            if cached is None:
                raise self._unknown(dataset_id)
        return copy.deepcopy(cached)

    def remove(self, dataset_id: str) -> bool:
        """Forget a dataset; True if it was registered."""
        with self._lock:
            self._summaries.pop(dataset_id, None)
            return self._frames.pop(dataset_id, None) is not None

    def ids(self) -> list[str]:
        """Registered dataset_ids, oldest first."""
        with self._lock:
            return list(self._frames)

    def __contains__(self, dataset_id: object) -> bool:
        with self._lock:
            return dataset_id in self._frames

    def __len__(self) -> int:
        with self._lock:
            return len(self._frames)

    def _check_size(self, size: int, name: str) -> None:
        if size > self.max_bytes:
            raise dataset_error(
                f"「{name}」は {size / 2**20:.1f} MB あり、上限"
                f"（{self.max_bytes / 2**20:.1f} MB）を超えています。",
                "必要な行や列に絞るか、ファイルを分けてアップロードしてください。"
                "上限を上げるには設定 KEIRI_AGENT_MAX_UPLOAD_MB（MB 単位）を変更します。",
                size_bytes=size,
                max_bytes=self.max_bytes,
            )

    def _register(
        self,
        frame: pd.DataFrame,
        name: str,
        *,
        notes: list[str] | None = None,
        column_notes: dict[str, list[str]] | None = None,
    ) -> str:
        dataset_id = "ds_" + secrets.token_hex(4)
        # the slow part, outside the lock
        summary = summarize(frame, dataset_id, name, notes=notes, column_notes=column_notes)
        with self._lock:
            while dataset_id in self._frames:
                dataset_id = "ds_" + secrets.token_hex(4)
            summary["dataset_id"] = dataset_id
            self._frames[dataset_id] = frame
            self._summaries[dataset_id] = summary
        return dataset_id

    def _unknown(self, dataset_id: str) -> UnknownDatasetError:
        registered = list(self._frames)
        if not registered:
            return UnknownDatasetError(
                f"unknown dataset_id {dataset_id!r}: no datasets are loaded",
                hint="upload a CSV or Excel file first",
                details={"dataset_id": dataset_id, "registered": []},
            )
        return UnknownDatasetError(
            unknown_choice_message("データセット ID", dataset_id, registered),
            hint="use one of the registered dataset_ids",
            details={"dataset_id": dataset_id, "registered": registered},
        )
