"""Strict JSON text -> Python values, for input from outside (events, snapshots).

`json.loads` alone accepts duplicate keys (the last one silently wins: two `group` fields are an attack
shape, one value seen by a filter and another applied), converts integer literals of any length (thousands
of digits cost quadratic time, then fail with advice about interpreter settings), and raises
`RecursionError` on deep nesting. Here each of those is a `ValueError` naming the problem.
"""

from __future__ import annotations

import json
from typing import Any

MAX_INT_DIGITS = 40  # far beyond any int64 field; longer literals are rejected before conversion


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise ValueError(f"duplicate key {key!r}")
            seen.add(key)
    return obj


def _int(text: str) -> int:
    if len(text) > MAX_INT_DIGITS:
        raise ValueError(f"integer of {len(text.lstrip('-'))} digits")
    return int(text)


def loads(text: str | bytes) -> Any:
    """The value of `text`; `ValueError` for invalid JSON, duplicate keys, huge integers, deep nesting."""
    try:
        return json.loads(text, object_pairs_hook=_object, parse_int=_int)
    except RecursionError:
        raise ValueError("nested too deeply") from None
