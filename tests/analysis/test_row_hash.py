"""Row hashes used by duplicate_check: equal rows hash alike, different rows apart."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from keiri_agent.agents.analysis.ops.row_hash import CHUNK_ROWS, repeated_mask, row_hashes


def frame() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "text": pd.Series(["関東", "近畿", None, "関東", "関東", None], dtype="str"),
            "number": [1.5, 2.0, np.nan, 1.5, 1.5, np.nan],
            "integer": [1, 2, 3, 1, 1, 3],
            "date": pd.to_datetime(
                ["2025-01-01", None, "2025-01-03", "2025-01-01"] * 1 + ["2025-01-01", "2025-01-03"]
            ),
            "category": pd.Categorical(["a", "b", "c", "a", "a", "c"]),
            "flag": [True, False, True, True, True, True],
            "objects": pd.Series(["x", 1, None, "x", "x", None], dtype=object),
        }
    )


def test_equal_rows_hash_alike_and_others_apart() -> None:
    data = frame()
    hashes = row_hashes(data)
    expected = data.duplicated(keep=False).to_numpy()
    assert (pd.Series(hashes).duplicated(keep=False).to_numpy() == expected).all()
    assert hashes[0] == hashes[3] == hashes[4]
    assert len({hashes[0], hashes[1], hashes[2]}) == 3


def test_negative_zero_and_chunked_arrow_strings() -> None:
    chunked = pd.Series(pd.arrays.ArrowStringArray(pa.chunked_array([["a", "b"], ["a", None]])))
    data = pd.DataFrame({"s": chunked, "f": [0.0, 1.0, -0.0, 1.0]})
    hashes = row_hashes(data)
    assert hashes[0] == hashes[2]
    assert hashes[1] != hashes[3]


def test_column_order_matters() -> None:
    data = pd.DataFrame({"a": [1, 2], "b": [2, 1]})
    hashes = row_hashes(data)
    assert hashes[0] != hashes[1]


def test_unhashable_values_raise_type_error() -> None:
    data = pd.DataFrame({"lists": pd.Series([[1], [1]], dtype=object)})
    with pytest.raises(TypeError):
        row_hashes(data)


def test_random_frames_agree_with_pandas_duplicated() -> None:
    rng = np.random.default_rng(3)
    rows = 5_000
    data = pd.DataFrame(
        {
            "s": pd.Series(rng.choice(["甲", "乙", "丙", None], rows), dtype="str"),
            "i": rng.integers(0, 3, rows),
            "f": np.where(rng.random(rows) < 0.2, np.nan, rng.integers(0, 2, rows) / 2),
        }
    )
    ours = pd.Series(row_hashes(data)).duplicated(keep=False).to_numpy()
    assert (ours == data.duplicated(keep=False).to_numpy()).all()


def test_repeated_mask_marks_every_copy() -> None:
    hashes = np.array([5, 1, 5, 2, 1, 9], dtype=np.uint64)
    assert repeated_mask(hashes).tolist() == [True, True, True, False, True, False]


def test_text_hashed_across_slices_stays_consistent() -> None:
    rows = CHUNK_ROWS + 10
    text = pd.Series(["同じ"] * rows, dtype="str")
    hashes = row_hashes(pd.DataFrame({"t": text}))
    assert hashes[0] == hashes[-1]


def test_arrow_text_hash_tells_order_empty_and_missing_apart() -> None:
    values = ["ab", "ba", "", None, "ab", "日本語", "日本語", "a" * 5000]
    sliced = pa.array(["skip", *values]).slice(1)  # an Arrow array with an offset
    data = pd.DataFrame({"t": pd.Series(pd.arrays.ArrowStringArray(sliced))})
    hashes = row_hashes(data)
    assert hashes[0] == hashes[4] and hashes[5] == hashes[6]
    assert len({hashes[0], hashes[1], hashes[2], hashes[3], hashes[5], hashes[7]}) == 6
