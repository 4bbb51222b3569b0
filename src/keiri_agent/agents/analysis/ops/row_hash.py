"""A 64-bit hash per row that costs ~8 bytes a row, whatever the column types.

``pd.util.hash_pandas_object`` turns a whole Arrow string column into Python
objects at once, and Arrow's dictionary encoding builds a hash table of every
distinct string: for 5M distinct strings either costs most of a gigabyte. Here
numbers and dates contribute their bits, Arrow text is hashed from its UTF-8
buffers with numpy (other objects a slice of rows at a time), and the columns are
mixed with a splitmix64 step. Equal rows always get equal hashes;
different rows collide with negligible probability, so callers confirm matches
exactly on the (few) rows whose hash repeats.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX_1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX_2 = np.uint64(0x94D049BB133111EB)
_NULL = np.uint64(0xFFFF_FFFF_FFFF_FFFE)
_EMPTY = np.uint64(0x5BD1_E995_0000_0001)
_PRIME = np.uint64(1_099_511_628_211)
CHUNK_ROWS = 262_144


def _splitmix(values: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        z = values + _GOLDEN
        z = (z ^ (z >> np.uint64(30))) * _MIX_1
        z = (z ^ (z >> np.uint64(27))) * _MIX_2
        return z ^ (z >> np.uint64(31))


def column_codes(series: pd.Series) -> np.ndarray:
    """One uint64 per row such that equal values (and missing values) get equal codes."""
    arrow = getattr(series.array, "_pa_array", None)
    if arrow is not None and pd.api.types.is_string_dtype(series.dtype):
        parts = [
            _hash_arrow_strings(chunk.slice(start, CHUNK_ROWS))
            for chunk in arrow.chunks
            for start in range(0, len(chunk), CHUNK_ROWS)
        ]
        return np.concatenate(parts) if parts else np.empty(0, dtype=np.uint64)
    if isinstance(series.dtype, pd.CategoricalDtype):
        return column_codes(series.astype(series.cat.categories.dtype))
    kind = series.dtype.kind if isinstance(series.dtype, np.dtype) else "O"
    if kind in "iub":
        return series.to_numpy().astype(np.int64, copy=False).view(np.uint64)
    if kind == "f":
        values = series.to_numpy(dtype=np.float64) + 0.0  # -0.0 and 0.0 alike
        bits = values.view(np.uint64).copy()
        bits[np.isnan(values)] = _NULL
        return bits
    if kind in "mM":
        bits = series.to_numpy().view(np.int64).view(np.uint64).copy()
        bits[series.isna().to_numpy()] = _NULL
        return bits
    return _hash_objects_in_chunks(series)


def _hash_arrow_strings(chunk: pa.Array) -> np.ndarray:
    """Polynomial hash of each string's UTF-8 bytes, straight from the Arrow buffers.

    Called on slices of ``CHUNK_ROWS`` strings: the byte-wise arrays are 8× the text.
    """
    chunk = chunk.cast(pa.large_string()) if chunk.type != pa.large_string() else chunk
    count = len(chunk)
    _validity, offsets_buffer, data_buffer = chunk.buffers()
    offsets = np.frombuffer(offsets_buffer, dtype=np.int64)[chunk.offset : chunk.offset + count + 1]
    out = np.full(count, _EMPTY, dtype=np.uint64)
    lengths = np.diff(offsets)
    start, end = int(offsets[0]), int(offsets[-1])
    if end > start:
        data = np.frombuffer(data_buffer, dtype=np.uint8)[start:end].astype(np.uint64)
        local = offsets - start
        position = np.arange(end - start, dtype=np.int64) - np.repeat(local[:-1], lengths)
        with np.errstate(over="ignore"):
            weights = _powers(int(lengths.max()))[position]
            sums = np.add.reduceat(data * weights, local[:-1][lengths > 0])
        out[lengths > 0] = _splitmix(sums + lengths[lengths > 0].astype(np.uint64))
    if chunk.null_count:
        out[np.asarray(chunk.is_null())] = _NULL
    return out


def _powers(length: int) -> np.ndarray:
    """1, P, P², … (mod 2**64) for the polynomial string hash."""
    powers = np.empty(max(length, 1), dtype=np.uint64)
    powers[0] = 1
    with np.errstate(over="ignore"):
        for index in range(1, length):
            powers[index] = powers[index - 1] * _PRIME
    return powers


def _hash_objects_in_chunks(series: pd.Series) -> np.ndarray:
    """Text and other values, hashed a slice at a time so few Python objects live at once."""
    out = np.empty(len(series), dtype=np.uint64)
    for start in range(0, len(series), CHUNK_ROWS):
        part = series.iloc[start : start + CHUNK_ROWS].to_numpy(dtype=object)
        out[start : start + len(part)] = pd.util.hash_array(part)
    return out


def repeated_mask(hashes: np.ndarray) -> np.ndarray:
    """True for every row whose hash occurs more than once (sort-based: ~3 arrays of memory)."""
    order = np.argsort(hashes, kind="stable")
    ordered = hashes[order]
    same_as_next = ordered[1:] == ordered[:-1]
    repeated = np.zeros(len(hashes), dtype=bool)
    repeated[1:] |= same_as_next
    repeated[:-1] |= same_as_next
    mask = np.empty(len(hashes), dtype=bool)
    mask[order] = repeated
    return mask


def row_hashes(frame: pd.DataFrame) -> np.ndarray:
    """A uint64 hash per row of ``frame`` (all columns, in order)."""
    hashes = np.zeros(len(frame), dtype=np.uint64)
    for name in frame.columns:
        with np.errstate(over="ignore"):
            hashes = _splitmix(hashes * np.uint64(31) + column_codes(frame[name]))
    return hashes
