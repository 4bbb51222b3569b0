"""How numbers, dates and text from result tables are shown to people (report, terminal)."""

from __future__ import annotations

import math
import re
from typing import Any

_MIDNIGHT = re.compile(r"^(\d{4}-\d{2}-\d{2})T00:00:00(\.0+)?$")


def format_value(value: Any) -> str:
    """Accounting-friendly text: thousands separators, no exponents, dates without 00:00.

    >>> format_value(73322767), format_value(84180.47), format_value(0.37702)
    ('73,322,767', '84,180.47', '0.377')
    """
    if value is None:
        return ""
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if math.isnan(value):
            return ""
        if math.isinf(value):
            return "∞" if value > 0 else "-∞"
        if value.is_integer() and abs(value) < 1e15:
            return f"{value:,.0f}"
        if abs(value) >= 1:
            return f"{value:,.2f}".rstrip("0").rstrip(".")
        return f"{value:.3g}"
    text = str(value)
    match = _MIDNIGHT.match(text)
    return match.group(1) if match else text
