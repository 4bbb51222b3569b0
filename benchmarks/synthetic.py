"""Synthetic sales data for the benchmarks (deterministic, any number of rows)."""

from __future__ import annotations

import numpy as np
import pandas as pd

REGIONS = np.array(["北海道", "東北", "関東", "中部", "近畿", "中国", "四国", "九州"])
CATEGORIES = np.array(["文房具", "消耗品", "事務機器", "家具", "IT機器"])


def make_sales(rows: int, *, seed: int = 7, extra_numeric: int = 8) -> pd.DataFrame:
    """Order ids, dates, text categories (Arrow strings), sales figures and extra metrics.

    ``extra_numeric`` adds columns 指標1.. with different variances (for correlation).
    """
    rng = np.random.default_rng(seed)
    quantity = rng.integers(1, 100, rows)
    price = rng.choice(np.array([120, 180, 2480, 8900, 24800, 128000]), rows)
    frame = pd.DataFrame(
        {
            "注文ID": pd.Series(np.char.add("ORD-", np.arange(rows).astype(str)), dtype="str"),
            "日付": pd.Timestamp("2024-01-01") + pd.to_timedelta(rng.integers(0, 730, rows), "D"),
            "地域": pd.Series(REGIONS[rng.integers(0, len(REGIONS), rows)], dtype="str"),
            "商品カテゴリ": pd.Series(
                CATEGORIES[rng.integers(0, len(CATEGORIES), rows)], dtype="str"
            ),
            "数量": quantity,
            "単価": price,
            "売上": quantity * price,
            "値引額": rng.random(rows) * 1000,
        }
    )
    for index in range(extra_numeric):
        frame[f"指標{index + 1}"] = rng.normal(0, index + 1, rows)
    return frame
