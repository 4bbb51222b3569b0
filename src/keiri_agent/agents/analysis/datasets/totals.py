"""Total rows in a loaded sheet: 合計, 小計, 総計, Total, Subtotal, Grand total.

A sheet made for people often carries its own totals: a row labelled 合計 under the
data, 小計 rows closing each block, a 総計 (or Total) row above or below everything.
Analysed as data such a row is counted twice and, because its key columns are often
blank, shows up as a group named (欠損) that is "the largest".

A row is a **total row** when both hold:

- a text (non-numeric, non-date) cell of the row is a total label: one of 合計, 総計,
  総合計, 小計, 計, Total, Subtotal, Grand total (full-width, case and spaces folded),
  alone or joined to a group name (``関東 小計``, ``関東計``, ``小計（関東）``,
  ``Total East``);
- its numbers are sums: at least one numeric column is filled in that row, and every
  filled numeric column equals, within the rounding of the total's own value, the sum
  of the rows it closes (not counting other total rows): the rows above it since the
  previous subtotal (its block), or all rows above it, or (a total on top) the rows
  below it up to the next labelled row. A column whose sum is zero does not count as
  evidence on its own.

A labelled row whose numbers are not sums is kept (it may be a real category, e.g. an
account named 計) and named in a note. Detection is conservative: no label, no total.
"""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass, field

import pandas as pd

_JA_TOTALS = ("総合計", "合計", "総計", "小計")
_EN_TOTAL_RE = re.compile(r"(?:grand total|sub[- ]?total|total)")
_QUALIFIER_RE = re.compile(r"\s*[(\[【:：].*$")
# words ending in 計 that are not totals (会計 accounting, 統計 statistics, 累計 running total …)
_NOT_TOTALS = set("会設統集時家生主早余推見累")
_MAX_LABEL = 40
# A superset of the values ``is_total_label`` accepts, tested on a whole column at once: the
# label holds 計 or "total" once NFKC-folded and lower-cased, and the only non-ASCII
# characters that fold into t, o, a, l are in these blocks (Latin supplements, letterlike
# and enclosed forms, squared CJK units, ligatures, full-width and mathematical letters).
# Plain Japanese text (kana, kanji without 計) and ASCII without "total" are thus never
# looked at one value at a time.
_LABEL_CANDIDATE_RE = (
    "計|(?i:total)|[\u00aa-\u02ff\u1d00-\u1eff\u2090-\u24ff\u3250-\u33ff\ufb00-\ufb06"
    "\uff21-\uff5a\U0001d400-\U0001d6ff\U0001f110-\U0001f1ff]"
)


def is_total_label(value: object) -> bool:
    """True when a cell reads as a total label (合計, 関東 小計, 小計（関東）, Grand total …)."""
    if not isinstance(value, str):
        return False
    text = " ".join(unicodedata.normalize("NFKC", value).lower().split())
    if not text or len(text) > _MAX_LABEL:
        return False
    head = _QUALIFIER_RE.sub("", text).strip()  # 小計（関東） → 小計, 合計: → 合計
    if head.startswith(_JA_TOTALS) or head.endswith(_JA_TOTALS):
        return True
    if head == "計" or (head.endswith("計") and head[-2] not in _NOT_TOTALS):
        return True
    words = head.split(" ")
    for size in (1, 2):
        for phrase in (" ".join(words[:size]), " ".join(words[-size:])):
            if _EN_TOTAL_RE.fullmatch(phrase):
                return True
    return False


@dataclass
class TotalRows:
    """Where the total rows are (positions in the frame) and which labels were not totals."""

    removed: list[int] = field(default_factory=list)
    kept: list[int] = field(default_factory=list)  # labelled, but the numbers are not sums


def _decimals(value: float) -> int:
    for digits in range(7):
        if math.isclose(value, round(value, digits), rel_tol=0.0, abs_tol=1e-9):
            return digits
    return 7


def _matches(total: float, expected: float) -> bool:
    tolerance = max(0.5 * 10 ** (-_decimals(total)), 1e-6 * abs(expected))
    return abs(total - expected) <= tolerance


class _Sums:
    """Sums of the detail (non-labelled) rows over any range of positions, in O(1)."""

    def __init__(self, values: pd.DataFrame, labelled: list[int]) -> None:
        detail = values.copy()
        counted = pd.Series(1, index=values.index)
        if labelled:
            detail.iloc[labelled] = float("nan")
            counted.iloc[labelled] = 0
        zero = pd.DataFrame([[0.0] * len(values.columns)], columns=values.columns)
        self._sums = pd.concat([zero, detail.fillna(0.0).cumsum()], ignore_index=True)
        self._counts = [0, *counted.cumsum().tolist()]

    def of(self, start: int, stop: int) -> pd.Series | None:
        """Column sums of the detail rows at positions ``[start, stop)``; None when none."""
        if stop <= start or self._counts[stop] == self._counts[start]:
            return None
        return self._sums.iloc[stop] - self._sums.iloc[start]


def _is_sum(row: pd.Series, sums: pd.Series | None) -> bool:
    """Every filled number of ``row`` is its column's sum; one of those sums is not zero."""
    if sums is None:
        return False
    filled = row.dropna()
    if filled.empty:
        return False
    evidence = False
    for value, expected in zip(filled.tolist(), sums[filled.index].tolist(), strict=True):
        if not _matches(float(value), expected):
            return False
        evidence = evidence or expected != 0
    return evidence


def _labelled(frame: pd.DataFrame, columns: list[str]) -> list[int]:
    """Positions of rows with a total label in one of ``columns`` (labels tested once each)."""
    mask = pd.Series(False, index=frame.index)
    for column in columns:
        series = frame[column]
        labels = [value for value in _label_candidates(series) if is_total_label(value)]
        if labels:
            mask |= series.isin(labels)
    return [position for position, flag in enumerate(mask.tolist()) if flag]


def _label_candidates(series: pd.Series) -> list[str]:
    """The distinct text values of ``series`` that may be total labels (a vectorised test).

    A text column is tested as it is and only the few values that pass are made
    distinct: collecting every distinct value first (a million ids) would copy them all.
    """
    if _is_string(series):
        hits = series.str.contains(_LABEL_CANDIDATE_RE, regex=True).fillna(False).astype(bool)
        return series[hits].drop_duplicates().tolist() if hits.any() else []
    values = pd.Series(series.dropna().unique())  # object (text mixed with numbers)
    values = values[[isinstance(value, str) for value in values]].astype("str")
    return values[values.str.contains(_LABEL_CANDIDATE_RE, regex=True)].tolist()


def find_total_rows(frame: pd.DataFrame) -> TotalRows:
    """The total rows of ``frame`` (see the module docstring)."""
    numeric = [
        column
        for column in frame.columns
        if pd.api.types.is_numeric_dtype(frame[column].dtype)
        and not pd.api.types.is_bool_dtype(frame[column].dtype)
    ]
    text = [c for c in frame.columns if frame[c].dtype == object or _is_string(frame[c])]
    found = TotalRows()
    if not numeric or not text or len(frame) < 2:
        return found
    labelled = _labelled(frame, text)
    if not labelled:
        return found
    values = frame[numeric].astype(float).reset_index(drop=True)
    sums = _Sums(values, labelled)
    ends = [*labelled[1:], len(frame)]
    block_start = 0
    for position, next_label in zip(labelled, ends, strict=True):
        row = values.iloc[position]
        candidates = (
            sums.of(block_start, position),  # its block (since the previous subtotal)
            sums.of(0, position),  # everything above it
            sums.of(position + 1, next_label),  # a total on top of its rows
        )
        if any(_is_sum(row, candidate) for candidate in candidates):
            found.removed.append(position)
            block_start = position + 1
        else:
            found.kept.append(position)
    return found


def _is_string(series: pd.Series) -> bool:
    return isinstance(series.dtype, pd.StringDtype)


def _row_list(numbers: list[int]) -> str:
    shown = ", ".join(f"{number} 行目" for number in numbers[:10])
    return shown + (" ほか" if len(numbers) > 10 else "")


def removed_note(row_numbers: list[int]) -> str:
    """The dataset note on excluded total rows (row numbers as the file counts them)."""
    return (
        f"合計行を {len(row_numbers)} 行除外しました（{_row_list(row_numbers)}）。"
        "残して分析するには「合計行を残す」（コマンドでは --keep-total-rows）を選んでください。"
    )


def kept_totals_note(row_numbers: list[int]) -> str:
    """The dataset note when total rows were found but kept on request."""
    return (
        f"合計行が {len(row_numbers)} 行あります（{_row_list(row_numbers)}）。"
        "指定により残しています。集計では二重に数えられます。"
    )


def labelled_note(row_numbers: list[int]) -> str:
    """The dataset note on rows labelled like totals whose numbers are not sums (kept)."""
    return (
        f"合計・小計のような見出しの行が {len(row_numbers)} 行ありますが、"
        f"数値が上の行の合計と一致しないためデータとして残しました（{_row_list(row_numbers)}）。"
        "合計行であれば、ファイルから削除してから読み込んでください。"
    )
