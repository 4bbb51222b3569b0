"""Fixtures for the executor, filter and plot tests: small synthetic sales data."""

from __future__ import annotations

import builtins
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import pytest


@pytest.fixture
def sales_frame() -> pd.DataFrame:
    """240 sales rows with Japanese column names, some missing values and datetimes."""
    rng = np.random.default_rng(7)
    rows = 240
    region = rng.choice(np.array(["東京", "大阪", "名古屋", "福岡"], dtype=object), rows)
    region[rng.choice(rows, 12, replace=False)] = None
    sales = rng.normal(1000, 300, rows).round(0)
    sales[rng.choice(rows, 9, replace=False)] = np.nan
    return pd.DataFrame(
        {
            "地域": pd.Series(region, dtype="str"),
            "店舗": rng.choice(["本店", "駅前", "郊外"], rows),
            "売上": sales,
            "数量": rng.integers(1, 20, rows),
            "単価": rng.uniform(50, 500, rows).round(1),
            "日付": pd.date_range("2025-01-01 09:30", periods=rows, freq="37h"),
        }
    )


@pytest.fixture
def no_file_writes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make any ``open`` for writing fail, so a test proves nothing is written."""
    real_open = builtins.open

    def guarded_open(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        if any(flag in mode for flag in "wax+"):
            raise AssertionError(f"analysis tried to write {file!r}")
        return real_open(file, mode, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", guarded_open)


def _same(got: Any, want: Any) -> bool:
    if want is None or (isinstance(want, float) and math.isnan(want)) or want is pd.NaT:
        return got is None
    if isinstance(want, float | np.floating):
        return isinstance(got, int | float) and math.isclose(got, float(want), rel_tol=1e-9)
    if isinstance(want, pd.Timestamp):
        return got == want.isoformat()
    if isinstance(want, np.generic):
        want = want.item()
    return bool(got == want) and not isinstance(got, np.generic)


@pytest.fixture
def assert_table() -> Callable[[dict[str, Any], pd.DataFrame], None]:
    """Compare a table payload with a DataFrame computed independently with pandas."""

    def check(payload: dict[str, Any], expected: pd.DataFrame) -> None:
        assert payload["columns"] == [str(c) for c in expected.columns]
        assert payload["total_rows"] == len(expected)
        assert len(payload["records"]) == min(len(expected), 1000)
        for index, (record, row) in enumerate(
            zip(payload["records"], expected.itertuples(index=False), strict=False)
        ):
            for column, want in zip(payload["columns"], row, strict=True):
                got = record[column]
                assert _same(got, want), f"row {index} column {column}: {got!r} != {want!r}"

    return check
