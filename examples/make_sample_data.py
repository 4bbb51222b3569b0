"""Generate the bundled sample data (fictional sales of a fictional Japanese company).

Deterministic (numpy ``default_rng(SEED)``); run from anywhere:

    uv run python examples/make_sample_data.py

Writes:

- ``src/keiri_agent/samples/sales.csv`` (the demo data): ~3,000 rows, Japanese headers,
  UTF-8 with BOM (as Excel saves it),
  a few missing 値引額/担当者 and 5 duplicated rows.
- ``sales_cp932.csv``: the first 200 rows saved in Shift_JIS (CP932).
- ``sales_en.csv``: 500 rows with English headers and values.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

SEED = 20240401
ROWS = 2995  # + 5 duplicates = 3,000
DUPLICATES = 5
HERE = Path(__file__).resolve().parent
# The demo's data ships inside the package so `keiri-agent demo` works from anywhere.
PACKAGE_SAMPLES = HERE.parent / "src" / "keiri_agent" / "samples"

# (ja, en, weight, stores[(ja, en)], staff[(ja, en)])
REGIONS = [
    (
        "北海道",
        "Hokkaido",
        5,
        [("札幌店", "Sapporo"), ("函館店", "Hakodate")],
        [("佐藤", "Sato"), ("高橋", "Takahashi")],
    ),
    (
        "東北",
        "Tohoku",
        6,
        [("仙台店", "Sendai"), ("盛岡店", "Morioka")],
        [("鈴木", "Suzuki"), ("阿部", "Abe")],
    ),
    (
        "関東",
        "Kanto",
        30,
        [("新宿店", "Shinjuku"), ("横浜店", "Yokohama"), ("大宮店", "Omiya"), ("千葉店", "Chiba")],
        [("田中", "Tanaka"), ("伊藤", "Ito"), ("渡辺", "Watanabe"), ("山本", "Yamamoto")],
    ),
    (
        "中部",
        "Chubu",
        15,
        [("名古屋店", "Nagoya"), ("静岡店", "Shizuoka"), ("金沢店", "Kanazawa")],
        [("中村", "Nakamura"), ("小林", "Kobayashi")],
    ),
    (
        "近畿",
        "Kinki",
        20,
        [("梅田店", "Umeda"), ("京都店", "Kyoto"), ("神戸店", "Kobe")],
        [("加藤", "Kato"), ("吉田", "Yoshida"), ("山田", "Yamada")],
    ),
    (
        "中国",
        "Chugoku",
        6,
        [("広島店", "Hiroshima"), ("岡山店", "Okayama")],
        [("松本", "Matsumoto"), ("井上", "Inoue")],
    ),
    (
        "四国",
        "Shikoku",
        4,
        [("高松店", "Takamatsu"), ("松山店", "Matsuyama")],
        [("木村", "Kimura")],
    ),
    (
        "九州",
        "Kyushu",
        14,
        [("博多店", "Hakata"), ("熊本店", "Kumamoto"), ("鹿児島店", "Kagoshima")],
        [("林", "Hayashi"), ("清水", "Shimizu")],
    ),
]

# (category ja, en, typical quantity, products[(ja, en, unit price)])
CATEGORIES = [
    (
        "文房具",
        "Stationery",
        40,
        [
            ("ボールペン", "Ballpoint pen", 120),
            ("ノート", "Notebook", 180),
            ("クリアファイル", "Clear file", 250),
            ("付箋", "Sticky notes", 200),
        ],
    ),
    (
        "消耗品",
        "Supplies",
        12,
        [
            ("コピー用紙A4", "Copy paper A4", 2980),
            ("トナー", "Toner", 8900),
            ("乾電池", "Batteries", 680),
        ],
    ),
    (
        "事務機器",
        "Office equipment",
        3,
        [
            ("電卓", "Calculator", 2480),
            ("シュレッダー", "Shredder", 15800),
            ("ラベルプリンター", "Label printer", 12800),
        ],
    ),
    (
        "家具",
        "Furniture",
        2,
        [
            ("オフィスチェア", "Office chair", 24800),
            ("デスク", "Desk", 39800),
            ("書庫", "Cabinet", 29800),
        ],
    ),
    (
        "IT機器",
        "IT equipment",
        2,
        [
            ("ノートPC", "Laptop", 128000),
            ("モニター", "Monitor", 24800),
            ("キーボード", "Keyboard", 4980),
            ("マウス", "Mouse", 2480),
        ],
    ),
]
CATEGORY_WEIGHTS = [30, 25, 15, 10, 20]
# busier at the fiscal year end (March) and in December
MONTH_WEIGHTS = [0.8, 0.9, 1.6, 1.0, 0.9, 1.0, 1.0, 0.8, 1.1, 1.0, 1.1, 1.4]

JA_COLUMNS = [
    "注文ID",
    "日付",
    "地域",
    "店舗",
    "商品カテゴリ",
    "商品名",
    "数量",
    "単価",
    "売上",
    "値引額",
    "担当者",
    "顧客区分",
]
EN_COLUMNS = [
    "order_id",
    "date",
    "region",
    "store",
    "category",
    "product",
    "quantity",
    "unit_price",
    "sales",
    "discount",
    "staff",
    "customer_type",
]


def _dates(rng: np.random.Generator, n: int) -> pd.DatetimeIndex:
    days = pd.date_range("2024-01-01", "2025-12-31", freq="D")
    weights = np.array(
        [MONTH_WEIGHTS[d.month - 1] * (1.15 if d.year == 2025 else 1.0) for d in days]
    )
    chosen = rng.choice(len(days), size=n, p=weights / weights.sum())
    return pd.DatetimeIndex(np.sort(days.values[chosen]))


def make_sales(seed: int = SEED, rows: int = ROWS) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The Japanese and the English version of the same generated rows (before duplicates)."""
    rng = np.random.default_rng(seed)
    region_w = np.array([r[2] for r in REGIONS], dtype=float)
    category_w = np.array(CATEGORY_WEIGHTS, dtype=float)
    ja, en = [], []
    for i, date in enumerate(_dates(rng, rows)):
        region = REGIONS[rng.choice(len(REGIONS), p=region_w / region_w.sum())]
        store = region[3][rng.integers(len(region[3]))]
        staff = region[4][rng.integers(len(region[4]))]
        category = CATEGORIES[rng.choice(len(CATEGORIES), p=category_w / category_w.sum())]
        product = category[3][rng.integers(len(category[3]))]
        corporate = rng.random() < 0.6
        typical = category[2] * (2.5 if corporate else 1.0)
        quantity = max(1, int(rng.poisson(typical)))
        price = round(product[2] * (1.05 if date.year == 2025 else 1.0))  # 2025 price revision
        sales = quantity * price
        discount = (
            int(round(sales * rng.choice([0.05, 0.1]), -1))
            if corporate and (rng.random() < 0.35)
            else 0
        )
        common = [f"ORD-{i + 1:06d}", date.strftime("%Y-%m-%d"), quantity, price, sales, discount]
        ja.append(
            [
                *common[:2],
                region[0],
                store[0],
                category[0],
                product[0],
                *common[2:],
                staff[0],
                "法人" if corporate else "個人",
            ]
        )
        en.append(
            [
                *common[:2],
                region[1],
                store[1],
                category[1],
                product[1],
                *common[2:],
                staff[1],
                "corporate" if corporate else "individual",
            ]
        )
    frames = (pd.DataFrame(ja, columns=JA_COLUMNS), pd.DataFrame(en, columns=EN_COLUMNS))
    # a few missing values for `missingness` to find (same cells in both versions)
    missing_discount = rng.choice(rows, size=18, replace=False)
    missing_staff = rng.choice(rows, size=25, replace=False)
    for frame in frames:
        discount_col, staff_col = frame.columns[9], frame.columns[10]
        frame[discount_col] = frame[discount_col].astype("Int64")
        frame.loc[missing_discount, discount_col] = pd.NA
        frame.loc[missing_staff, staff_col] = None
    return frames


def with_duplicates(frame: pd.DataFrame, seed: int = SEED, count: int = DUPLICATES) -> pd.DataFrame:
    """Insert ``count`` exact duplicate rows right after their originals."""
    rng = np.random.default_rng(seed + 1)
    picked = np.sort(rng.choice(len(frame), size=count, replace=False))
    order = np.sort(np.concatenate([np.arange(len(frame)), picked]), kind="stable")
    return frame.iloc[order].reset_index(drop=True)


def main() -> None:
    """Write the package's samples/sales.csv, and sales_cp932.csv and sales_en.csv here."""
    ja, en = make_sales()
    sales = with_duplicates(ja)
    sales.to_csv(
        PACKAGE_SAMPLES / "sales.csv", index=False, encoding="utf-8-sig", lineterminator="\r\n"
    )
    sales.head(200).to_csv(
        HERE / "sales_cp932.csv", index=False, encoding="cp932", lineterminator="\r\n"
    )
    with_duplicates(en.head(495)).to_csv(HERE / "sales_en.csv", index=False, encoding="utf-8")
    target = PACKAGE_SAMPLES / "sales.csv"
    print(f"wrote {len(sales)} rows to {target} (+ sales_cp932.csv, sales_en.csv)")


if __name__ == "__main__":
    main()
