"""``json.dumps`` built once, for values known to hold no cycles (the hot paths' JSON).

``json.dumps`` (and ``JSONEncoder.encode``) builds a new C encoder, with markers that
detect circular references, on every call. The run log's lines and the run state are
encoded from new containers of bounded depth, so one encoder without the markers,
built once, writes the same text for a fraction of the cost.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any


def acyclic_dumps(*, default: Callable[[Any], Any], allow_nan: bool) -> Callable[[Any], str]:
    """A function equal to ``json.dumps(value, ensure_ascii=False, allow_nan=allow_nan,
    default=default)`` for values without cycles (a cycle would recurse without end)."""
    make_encoder = getattr(json.encoder, "c_make_encoder", None)
    if make_encoder is None:  # pragma: no cover - CPython has the C encoder
        return json.JSONEncoder(ensure_ascii=False, allow_nan=allow_nan, default=default).encode
    encoder = make_encoder(
        None, default, json.encoder.encode_basestring, None, ": ", ", ", False, False, allow_nan
    )
    return lambda value: "".join(encoder(value, 0))
