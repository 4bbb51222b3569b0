"""Matching rows of tables: ``table.join``, ``table.reconcile``, ``table.dedupe``.

Keys: ``on``/``keys`` is a list of column names (same name on both sides) or of
``{left, right}`` pairs. A key value is compared by kind (``1`` equals ``1.0``, a boolean
never equals a number); a row whose key holds a null never matches. ``normalize``
(``normalize_keys`` in ``table.reconcile``) compares text after NFKC (full-width →
half-width), trimming and case folding, so ``"ＡＢＣ株式会社 "`` equals ``"abc株式会社"``.

``table.reconcile`` (消込・請求書照合) pairs rows one-to-one (each right row at most
once). Among the rows with equal keys, a pair *matches* when the amounts differ by at
most ``amount.tolerance`` and the dates by at most ``date.window_days``; pairs are taken
closest amount first, then closest date, then the earlier left row and the earlier right
row, so the result does not depend on anything but the data. Key-equal rows left over are
paired the same way as ``differences`` with the reason. Every input row lands in exactly
one output. Amounts read office text (``1,234``, ``¥1,234``, ``△500``) and dates ISO,
``2025/1/31`` or ``2025年1月31日`` text or date values (:mod:`keiri_agent.files.cells`).
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from keiri_agent.blocks.base import BlockContext, ProcessingBlock
from keiri_agent.blocks.records import (
    check_columns,
    columns_of,
    invalid,
    is_null,
    records_input,
)
from keiri_agent.files.cells import date_value, decimal_value

RIGHT_PREFIX = "右_"
"""Right-side columns in ``matched``/``differences`` rows: ``右_<列名>``."""
AMOUNT_DIFF = "金額差"
"""Left amount minus right amount (``matched`` and ``differences``)."""
DAYS_DIFF = "日付差_日"
"""Right date minus left date in days (``matched`` and ``differences``)."""
REASON = "理由"
"""Why a key-matched pair is a difference (``differences`` only)."""
MAX_CANDIDATE_PAIRS = 1_000_000
"""Key-equal (left, right) pairs ``table.reconcile`` weighs at most (a key shared by
thousands of rows on both sides means the keys are too coarse)."""


def _key_pairs(inputs: Mapping[str, Any], name: str) -> list[tuple[str, str]]:
    raw = inputs.get(name)
    if isinstance(raw, str):
        raw = [raw]
    if not isinstance(raw, list) or not raw:
        raise invalid(
            f"{name} に照合に使う列を 1 つ以上指定してください",
            hint=f"例: {name}: [取引先] または {name}: [{{left: 取引先, right: 振込名義}}]",
            field=name,
        )
    pairs = []
    for index, item in enumerate(raw):
        if isinstance(item, str):
            pairs.append((item, item))
        elif (
            isinstance(item, Mapping)
            and isinstance(item.get("left"), str)
            and isinstance(item.get("right"), str)
        ):
            pairs.append((item["left"], item["right"]))
        else:
            raise invalid(
                f"{name}[{index}] は列名か {{left: 列名, right: 列名}} で指定してください",
                field=f"{name}[{index}]",
            )
    return pairs


def _normal_text(value: str) -> str:
    return unicodedata.normalize("NFKC", value).strip().casefold()


def _key_part(value: Any, normalize: bool) -> tuple[Any, ...] | None:
    if is_null(value):
        return None
    if isinstance(value, bool):
        return ("boolean", value)
    if isinstance(value, int | float):
        return ("number", value)
    if isinstance(value, str):
        return ("text", _normal_text(value) if normalize else value)
    return ("other", json.dumps(value, ensure_ascii=False, sort_keys=True, default=str))


def _row_key(
    row: Mapping[str, Any], columns: Sequence[str], normalize: bool
) -> tuple[Any, ...] | None:
    parts = []
    for column in columns:
        part = _key_part(row.get(column), normalize)
        if part is None:
            return None
        parts.append(part)
    return tuple(parts)


def _flag(inputs: Mapping[str, Any], name: str, default: bool) -> bool:
    value = inputs.get(name)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise invalid(f"{name} は true か false で指定してください", field=name)
    return value


def _choice(inputs: Mapping[str, Any], name: str, choices: tuple[str, ...]) -> str:
    value = inputs.get(name)
    if value is None:
        return choices[0]
    if value not in choices:
        raise invalid(
            f"{name} に {value!r} は指定できません（{' / '.join(choices)} のどれか）",
            field=name,
        )
    return str(value)


# --- table.join ------------------------------------------------------------------------


class JoinBlock(ProcessingBlock):
    """``table.join``: add the columns of the right row whose keys equal the left row's."""

    def run(self, inputs: Mapping[str, Any], ctx: BlockContext) -> dict[str, Any]:
        left = records_input(inputs, "left")
        right = records_input(inputs, "right")
        pairs = _key_pairs(inputs, "on")
        how = _choice(inputs, "how", ("left", "inner"))
        on_duplicate = _choice(inputs, "on_duplicate", ("first", "error"))
        suffix = inputs.get("suffix") or "_right"
        if not isinstance(suffix, str):
            raise invalid("suffix は文字列です", field="suffix")
        left_keys = [a for a, _ in pairs]
        right_keys = [b for _, b in pairs]
        check_columns(left_keys, left, "on")
        check_columns(right_keys, right, "on")
        index: dict[tuple[Any, ...], dict[str, Any]] = {}
        counts: dict[tuple[Any, ...], int] = {}
        for row in right:
            key = _row_key(row, right_keys, False)
            if key is None:
                continue
            index.setdefault(key, row)
            counts[key] = counts.get(key, 0) + 1
        duplicates = [
            {"key": {c: index[key].get(c) for c in right_keys}, "count": count}
            for key, count in counts.items()
            if count > 1
        ]
        if duplicates and on_duplicate == "error":
            first = duplicates[0]
            raise invalid(
                f"右の表でキー {first['key']} が {first['count']} 行あります"
                f"（ほかに {len(duplicates) - 1} 件の重複キー）",
                hint="重複を table.dedupe で除くか、"
                "on_duplicate: first（最初の行を使う）にしてください",
                field="right",
            )
        left_columns = set(columns_of(left))
        extra = [c for c in columns_of(right) if c not in right_keys]
        names = {c: f"{c}{suffix}" if c in left_columns else c for c in extra}
        output = []
        matched = 0
        for number, row in enumerate(left):
            if number % 10_000 == 0:
                ctx.check_cancelled()
            key = _row_key(row, left_keys, False)
            found = index.get(key) if key is not None else None
            if found is None and how == "inner":
                continue
            matched += found is not None
            output.append({**row, **{names[c]: (found or {}).get(c) for c in extra}})
        return {
            "records": output,
            "duplicates": duplicates,
            "summary": {
                "left_rows": len(left),
                "right_rows": len(right),
                "rows": len(output),
                "matched": matched,
                "unmatched_left": len(left) - matched,
            },
        }


# --- table.reconcile -------------------------------------------------------------------


@dataclass(frozen=True)
class _Side:
    keys: list[str]
    amount: str | None
    date: str | None


@dataclass(frozen=True)
class _Rules:
    left: _Side
    right: _Side
    tolerance: Decimal
    window: int | None


def _rules(inputs: Mapping[str, Any]) -> _Rules:
    pairs = _key_pairs(inputs, "keys")
    amount = inputs.get("amount") or {}
    date = inputs.get("date") or {}
    for name, value in (("amount", amount), ("date", date)):
        if not isinstance(value, Mapping):
            raise invalid(f"{name} は {{left: 列名, right: 列名}} で指定してください", field=name)
    tolerance = amount.get("tolerance", 0) or 0
    window = date.get("window_days", 0) or 0
    if isinstance(tolerance, bool) or not isinstance(tolerance, int | float) or tolerance < 0:
        raise invalid("amount.tolerance は 0 以上の数値です", field="amount.tolerance")
    if isinstance(window, bool) or not isinstance(window, int) or window < 0:
        raise invalid("date.window_days は 0 以上の整数です", field="date.window_days")
    for name, value in (("amount", amount), ("date", date)):
        if value and not (
            isinstance(value.get("left"), str) and isinstance(value.get("right"), str)
        ):
            raise invalid(
                f"{name} には left と right の列名を両方指定してください",
                hint=f"例: {name}: {{left: 請求額, right: 入金額}}",
                field=name,
            )
    return _Rules(
        left=_Side([a for a, _ in pairs], amount.get("left"), date.get("left")),
        right=_Side([b for _, b in pairs], amount.get("right"), date.get("right")),
        tolerance=Decimal(str(tolerance)),
        window=window if date else None,
    )


def _number_of(value: Any) -> Decimal | None:
    if is_null(value):
        return None
    return decimal_value(value)


@dataclass(frozen=True)
class _Pair:
    left: int
    right: int
    amount_diff: Decimal | None
    days: int | None
    problems: tuple[str, ...]

    def order(self) -> tuple[Any, ...]:
        return (
            self.amount_diff is None,
            abs(self.amount_diff or 0),
            self.days is None,
            abs(self.days or 0),
            self.left,
            self.right,
        )


def _pair(
    rules: _Rules, left: Mapping[str, Any], right: Mapping[str, Any], i: int, j: int
) -> _Pair:
    problems: list[str] = []
    amount_diff = None
    if rules.left.amount and rules.right.amount:
        a = _number_of(left.get(rules.left.amount))
        b = _number_of(right.get(rules.right.amount))
        if a is None or b is None:
            side, column = ("左", rules.left.amount) if a is None else ("右", rules.right.amount)
            problems.append(f"{side}の金額（{column}）を数値として読めません")
        else:
            amount_diff = a - b
            if abs(amount_diff) > rules.tolerance:
                problems.append(
                    f"金額差 {_plain(amount_diff)} が"
                    f"許容範囲（±{_plain(rules.tolerance)}）を超えています"
                )
    days = None
    if rules.window is not None and rules.left.date and rules.right.date:
        a_date = date_value(left.get(rules.left.date))
        b_date = date_value(right.get(rules.right.date))
        if a_date is None or b_date is None:
            side, column = ("左", rules.left.date) if a_date is None else ("右", rules.right.date)
            problems.append(f"{side}の日付（{column}）を日付として読めません")
        else:
            days = (b_date - a_date).days
            if abs(days) > rules.window:
                problems.append(f"日付の差 {days} 日が許容範囲（±{rules.window} 日）を超えています")
    return _Pair(i, j, amount_diff, days, tuple(problems))


def _plain(number: Decimal) -> int | float:
    return int(number) if number == number.to_integral_value() else float(number)


def _take(pairs: list[_Pair]) -> list[_Pair]:
    """One-to-one choice: best pairs first (see the module docstring)."""
    used_left: set[int] = set()
    used_right: set[int] = set()
    taken = []
    for pair in sorted(pairs, key=_Pair.order):
        if pair.left in used_left or pair.right in used_right:
            continue
        used_left.add(pair.left)
        used_right.add(pair.right)
        taken.append(pair)
    return taken


def _joined(left: Mapping[str, Any], right: Mapping[str, Any], pair: _Pair) -> dict[str, Any]:
    row = dict(left)
    row.update({f"{RIGHT_PREFIX}{k}": v for k, v in right.items()})
    row[AMOUNT_DIFF] = None if pair.amount_diff is None else _plain(pair.amount_diff)
    row[DAYS_DIFF] = pair.days
    return row


class ReconcileBlock(ProcessingBlock):
    """``table.reconcile``: one-to-one matching with an amount tolerance and a date window."""

    def run(self, inputs: Mapping[str, Any], ctx: BlockContext) -> dict[str, Any]:
        left = records_input(inputs, "left")
        right = records_input(inputs, "right")
        rules = _rules(inputs)
        normalize = _flag(inputs, "normalize_keys", True)
        check_columns(rules.left.keys, left, "keys")
        check_columns(rules.right.keys, right, "keys")
        for side, rows, name in (("left", left, "amount"), ("right", right, "amount")):
            column = getattr(rules, side).amount
            check_columns([column] if column else [], rows, f"{name}.{side}")
        for side, rows in (("left", left), ("right", right)):
            column = getattr(rules, side).date
            check_columns([column] if column else [], rows, f"date.{side}")
        by_key: dict[tuple[Any, ...], list[int]] = {}
        for j, row in enumerate(right):
            key = _row_key(row, rules.right.keys, normalize)
            if key is not None:
                by_key.setdefault(key, []).append(j)
        candidates: list[_Pair] = []
        for i, row in enumerate(left):
            if i % 2_000 == 0:
                ctx.check_cancelled()
            key = _row_key(row, rules.left.keys, normalize)
            same = by_key.get(key, []) if key is not None else []
            if len(candidates) + len(same) > MAX_CANDIDATE_PAIRS:
                raise invalid(
                    f"キーが同じ行の組み合わせが {MAX_CANDIDATE_PAIRS:,} 組を超えるため"
                    "照合できません"
                    f"（左の {i + 1} 行目のキーに右の {len(same):,} 行が一致）",
                    hint="keys に請求番号など行を絞り込める列を加えてください",
                    field="keys",
                )
            candidates.extend(_pair(rules, row, right[j], i, j) for j in same)
        matched = _take([p for p in candidates if not p.problems])
        used_left = {p.left for p in matched}
        used_right = {p.right for p in matched}
        differences = _take(
            [
                p
                for p in candidates
                if p.problems and p.left not in used_left and p.right not in used_right
            ]
        )
        used_left |= {p.left for p in differences}
        used_right |= {p.right for p in differences}
        matched.sort(key=lambda p: (p.left, p.right))
        differences.sort(key=lambda p: (p.left, p.right))
        return {
            "matched": [_joined(left[p.left], right[p.right], p) for p in matched],
            "unmatched_left": [row for i, row in enumerate(left) if i not in used_left],
            "unmatched_right": [row for j, row in enumerate(right) if j not in used_right],
            "differences": [
                {**_joined(left[p.left], right[p.right], p), REASON: "。".join(p.problems)}
                for p in differences
            ],
            "summary": {
                "left_rows": len(left),
                "right_rows": len(right),
                "matched": len(matched),
                "differences": len(differences),
                "unmatched_left": len(left) - len(used_left),
                "unmatched_right": len(right) - len(used_right),
            },
        }


# --- table.dedupe ----------------------------------------------------------------------

ROW_NUMBER = "元の行番号"
KEPT_ROW = "残した行番号"


class DedupeBlock(ProcessingBlock):
    """``table.dedupe``: keep one row per key (the first or the last)."""

    def run(self, inputs: Mapping[str, Any], ctx: BlockContext) -> dict[str, Any]:
        records = records_input(inputs)
        given = inputs.get("keys")
        if given is not None:
            keys = [given] if isinstance(given, str) else given
            if not isinstance(keys, list) or not keys or not all(isinstance(k, str) for k in keys):
                raise invalid("keys は列名のリストです（省略するとすべての列）", field="keys")
            check_columns(keys, records, "keys")
        else:
            keys = columns_of(records)
        keep = _choice(inputs, "keep", ("first", "last"))
        normalize = _flag(inputs, "normalize", False)
        order = range(len(records)) if keep == "first" else range(len(records) - 1, -1, -1)
        kept: dict[tuple[Any, ...], int] = {}
        dropped: dict[int, int] = {}
        for index in order:
            row = records[index]
            key = tuple(
                ("null",) if is_null(row.get(c)) else _key_part(row.get(c), normalize) for c in keys
            )
            if key in kept:
                dropped[index] = kept[key]
            else:
                kept[key] = index
        return {
            "records": [row for i, row in enumerate(records) if i not in dropped],
            "duplicates": [
                {**records[i], ROW_NUMBER: i + 1, KEPT_ROW: dropped[i] + 1} for i in sorted(dropped)
            ],
            "summary": {
                "rows": len(records),
                "kept": len(records) - len(dropped),
                "removed": len(dropped),
            },
        }
