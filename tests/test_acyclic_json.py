"""``acyclic_dumps`` writes what ``json.dumps`` writes, built once."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from keiri_agent.acyclic_json import acyclic_dumps

VALUES: list[Any] = [
    {"金額": 1200, "rate": 0.1, "ok": True, "none": None, "list": [1, "二", {"3": [4.5]}]},
    '請求書\n"引用"\t\u2028',
    [1e300, -0.0, 12345678901234567890],
    {},
    [],
]


@pytest.mark.parametrize("value", VALUES)
def test_the_text_equals_json_dumps(value: Any) -> None:
    dumps = acyclic_dumps(default=str, allow_nan=True)
    assert dumps(value) == json.dumps(value, ensure_ascii=False, default=str)


class _Stamp:
    def __str__(self) -> str:
        return "2026-11-27"


def test_default_and_nan_follow_the_arguments() -> None:
    lenient = acyclic_dumps(default=str, allow_nan=True)
    assert lenient({"when": _Stamp()}) == '{"when": "2026-11-27"}'
    assert lenient([math.nan]) == "[NaN]"
    strict = acyclic_dumps(default=json.JSONEncoder().default, allow_nan=False)
    with pytest.raises(ValueError):
        strict([math.inf])
    with pytest.raises(TypeError):
        strict({"set": {1}})
