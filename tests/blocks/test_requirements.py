"""blocks.requirements: session keys, initial values, merge + difference warnings, checks."""

from __future__ import annotations

from typing import Any

import pytest

from keiri_agent.blocks.requirements import (
    accepted_extensions,
    check_value,
    initial_values,
    is_empty,
    merge_values,
    session_key,
)

REQUIREMENTS: list[dict[str, Any]] = [
    {"id": "memo", "type": "text", "label": "メモ"},
    {"id": "ok", "type": "boolean", "label": "OK"},
    {"id": "region", "type": "select", "label": "地域", "options": ["関東", "関西"]},
    {"id": "empty_select", "type": "select", "label": "x"},
    {"id": "amount", "type": "number", "label": "金額"},
    {"id": "evidence", "type": "file", "label": "証跡"},
    {"id": "books", "type": "files", "label": "帳簿"},
    {"id": "folder", "type": "folder", "label": "フォルダ"},
    {"id": "talk", "type": "chat", "label": "相談"},
    {"id": "rate", "type": "number", "label": "率", "default": 0.1},
]


def test_session_key_follows_the_seed_contract() -> None:
    assert session_key("inv", "collect", "1.0.0") == "plan:inv::node:collect::v1.0.0"


def test_initial_values_per_type_and_defaults_win() -> None:
    assert initial_values(REQUIREMENTS) == {
        "memo": "",
        "ok": False,
        "region": "関東",
        "empty_select": None,
        "amount": None,
        "evidence": None,
        "books": [],
        "folder": None,
        "talk": "",
        "rate": 0.1,
    }


def test_initial_defaults_are_copies() -> None:
    requirement = {"id": "xs", "type": "files", "label": "x", "default": []}
    values = initial_values([requirement])
    values["xs"].append(b"1")
    assert requirement["default"] == []


def test_merge_keeps_matching_values_and_warns_about_every_difference() -> None:
    old = [
        {"id": "memo", "type": "text", "label": "メモ"},
        {"id": "amount", "type": "text", "label": "金額"},
        {"id": "gone", "type": "boolean", "label": "x"},
        {"id": "unset", "type": "boolean", "label": "x"},
    ]
    new = [
        {"id": "memo", "type": "text", "label": "メモ（改）"},
        {"id": "amount", "type": "number", "label": "金額", "default": 1},
        {"id": "unset", "type": "boolean", "label": "x"},
        {"id": "added", "type": "select", "label": "y", "options": ["a", "b"]},
    ]
    values, warnings = merge_values({"memo": "hi", "amount": "12", "gone": True}, old, new)
    assert values == {"memo": "hi", "amount": 1, "unset": False, "added": "a"}
    assert [(w["code"], w["id"]) for w in warnings] == [
        ("REQUIREMENT_TYPE_CHANGED", "amount"),
        ("REQUIREMENT_ADDED", "added"),
        ("REQUIREMENT_REMOVED", "gone"),
    ]
    assert all(w["message"] for w in warnings)


def test_merge_with_unchanged_requirements_changes_nothing() -> None:
    values = {"memo": "x", "ok": True}
    reqs = REQUIREMENTS[:2]
    assert merge_values(values, reqs, reqs) == (values, [])


@pytest.mark.parametrize(
    ("value", "empty"),
    [(None, True), ("", True), ("  ", True), ([], True), (False, False), (0, False), ("a", False)],
)
def test_is_empty(value: Any, empty: bool) -> None:
    assert is_empty(value) is empty


def test_accepted_extensions_are_normalised() -> None:
    assert accepted_extensions(".zip, XLSX ,") == [".zip", ".xlsx"]
    assert accepted_extensions(None) == []


FILE = {"name": "a.ZIP", "data": b"PK"}


@pytest.mark.parametrize(
    ("requirement", "value", "problem"),
    [
        ({"type": "text"}, "abc", None),
        ({"type": "text"}, 3, "文字で入力してください"),
        ({"type": "text", "validation": {"pattern": r"\d{3}"}}, "12a", "決められた形式"),
        ({"type": "text", "validation": {"pattern": r"\d{3}"}}, "123", None),
        ({"type": "text", "validation": {"min_length": 3}}, "ab", "3 文字以上"),
        ({"type": "text", "validation": {"max_length": 2}}, "abc", "2 文字以内"),
        ({"type": "chat"}, "相談です", None),
        ({"type": "select", "options": ["a", "b"]}, "b", None),
        ({"type": "select", "options": ["a", "b"]}, "c", "選択肢にありません"),
        ({"type": "boolean"}, True, None),
        ({"type": "boolean"}, "yes", "true / false"),
        ({"type": "number"}, 3, None),
        ({"type": "number"}, 2.5, None),
        ({"type": "number"}, True, "数値で入力してください（入力されたのは 真偽値）"),
        ({"type": "number"}, "3", "数値で入力してください（入力されたのは 文字列）"),
        ({"type": "number", "validation": {"min": 0, "max": 10}}, -1, "0 以上"),
        ({"type": "number", "validation": {"min": 0, "max": 10}}, 11, "10 以下"),
        ({"type": "number", "validation": {"min": 0, "max": 10}}, 10, None),
        ({"type": "file"}, b"raw", None),
        ({"type": "file", "accept": ".zip"}, b"raw", None),
        ({"type": "file", "accept": ".zip,.xlsx"}, FILE, None),
        (
            {"type": "file", "accept": ".xlsx"},
            FILE,
            "受け付けない種類です。.xlsx のファイルを選んでください",
        ),
        ({"type": "file"}, "a.zip", "ファイルをアップロードしてください"),
        (
            {"type": "file"},
            {"name": "a.zip", "data": "text"},
            "ファイルの名前と中身を読み取れません",
        ),
        ({"type": "files", "accept": ".zip"}, [FILE, b"x"], None),
        (
            {"type": "files", "accept": ".zip"},
            [FILE, {"name": "b.pdf", "data": b""}],
            "2 番目のファイル",
        ),
        ({"type": "files"}, FILE, "ファイルのリストを渡してください"),
        ({"type": "folder"}, "/data/evidence", None),
        ({"type": "folder"}, [FILE], None),
        ({"type": "folder"}, 3, "フォルダのパスかファイルのリスト"),
        ({"type": "video"}, 3, "項目の型 'video' は使えません"),
    ],
)
def test_check_value(requirement: dict[str, Any], value: Any, problem: str | None) -> None:
    found = check_value(requirement, value)
    if problem is None:
        assert found is None
    else:
        assert found is not None and problem in found
