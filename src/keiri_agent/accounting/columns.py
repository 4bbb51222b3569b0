"""Which column of a table plays which role, found by its header (never by position).

A bank export, an invoice list or a customer master names its columns in its own
words: 入金金額 / お預り金額 / 入金額, 支払期限 / 入金予定日, フリガナ / 得意先名カナ. A
:class:`Role` lists the words its column is known by; :func:`find_columns` gives each
role the header that names it best:

- a header equal to one of the role's words (after :func:`header_key`: NFKC, spaces,
  brackets and marks removed) wins;
- then a header that *ends* with one of its words — a Japanese compound names what it
  is last (得意先名カナ is a reading, not a name; 請求金額税込 is an amount);
- then a header that contains one of them; longer words before shorter ones.

Each header serves one role. A user may name the column of a role explicitly
(``overrides``); an override naming no header of the table is an error saying which
headers there are. A required role with no column is an error that names the role in
the user's words, lists the headers found and says how to name the column.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from keiri_agent.errors import UserInputError

_NOISE = re.compile(r"[\s()\[\]{}（）［］【】「」『』<>＜＞:：・/／_\-＿.,、。*＊※]")


@dataclass(frozen=True)
class Role:
    """A role a column can play: ``name`` (the override key), ``label`` (in messages),
    the header ``words`` it is known by, and whether the table needs it."""

    name: str
    label: str
    words: tuple[str, ...]
    required: bool = False


_OKURIGANA = re.compile(r"(?<=[\u4e00-\u9fff々])[\u3041-\u3096]+|^[おご](?=[\u4e00-\u9fff])")
"""Kana written after a kanji (預かり / 預り, 支払い / 支払, 引き出し) and the polite お・ご
in front: banks write one header several ways."""


def header_key(header: str) -> str:
    """A header as compared: NFKC, upper case, spaces, brackets and marks removed, and
    okurigana and a polite prefix dropped (お預かり金額 = 預り金額 = 預金額)."""
    text = _NOISE.sub("", unicodedata.normalize("NFKC", str(header)))
    return _OKURIGANA.sub("", text).upper()


def fit(header: str, role: Role) -> float:
    """How well ``header`` names ``role`` (0: not at all)."""
    key = header_key(header)
    if not key:
        return 0.0
    best = 0.0
    for word in role.words:
        wanted = header_key(word)
        if key == wanted:
            return 3.0
        length = len(wanted) / 100
        if key.endswith(wanted):
            best = max(best, 2.0 + length)
        elif wanted in key:
            best = max(best, 1.0 + length)
    return best


def header_row(
    rows: Sequence[Sequence[object]], roles: Sequence[Role], scan: int = 20
) -> int | None:
    """The row among the first ``scan`` whose cells name the most ``roles`` (at least
    two, one of them required) — the header of a download whatever lines precede it
    (account, period, holder), or None."""
    best, found = 1, None
    required = {role.name for role in roles if role.required}
    for index, row in enumerate(rows[:scan]):
        cells = [str(cell) for cell in row if isinstance(cell, str) and cell.strip()]
        named = {role.name for role in roles if any(fit(cell, role) > 0 for cell in cells)}
        if len(named) > best and (named & required or not required):
            best, found = len(named), index
    return found


def find_columns(
    headers: Sequence[str],
    roles: Iterable[Role],
    *,
    table: str,
    overrides: Mapping[str, str] | None = None,
    option: str = "columns",
) -> dict[str, str]:
    """Role name → header of ``headers`` (roles without a column are left out).

    ``table`` names the table in messages (「入金明細」); ``option`` is the input a user
    sets to name a column (``columns.bank``).

    Raises:
        UserInputError: an override names no header, or a required role has no column.
    """
    roles = list(roles)
    known = {role.name: role for role in roles}
    found: dict[str, str] = {}
    for name, header in (overrides or {}).items():
        if name not in known:
            raise UserInputError(
                f"{option} の {name!r} は{table}の列の役割ではありません",
                hint=f"使える役割: {', '.join(known)}",
                details={"table": table, "role": name},
            )
        if header not in headers:
            raise UserInputError(
                f"{table}に列 {header!r} がありません（{option}.{name} で指定された列）",
                hint=f"{table}の列: {', '.join(map(str, headers)) or '（なし）'}",
                details={"table": table, "role": name, "column": header},
            )
        found[name] = header
    fits = sorted(
        (
            (score, -position, role.name, header)
            for role in roles
            if role.name not in found
            for position, header in enumerate(headers)
            if header not in found.values() and (score := fit(header, role)) > 0
        ),
        reverse=True,
    )
    for _, _, name, header in fits:
        if name not in found and header not in found.values():
            found[name] = header
    missing = [role for role in roles if role.required and role.name not in found]
    if missing:
        role = missing[0]
        raise UserInputError(
            f"{table}に「{role.label}」の列が見つかりません",
            hint=(
                f"{table}の列: {', '.join(map(str, headers)) or '（なし）'}。"
                f"「{role.label}」の列名を {option} の {role.name} に指定してください"
                f"（例: {role.name}: {role.words[0]}）"
            ),
            details={"table": table, "role": role.name, "columns": list(map(str, headers))},
        )
    return found
