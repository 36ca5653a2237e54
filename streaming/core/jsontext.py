"""Strict JSON text -> Python values, for input from outside (events, snapshots).

`json.loads` alone accepts duplicate keys (the last one silently wins: two `group` fields are an attack
shape, one value seen by a filter and another applied), converts integer literals of any length (thousands
of digits cost quadratic time, then fail with advice about interpreter settings), and raises
`RecursionError` on deep nesting. Here each of those is a `ValueError` naming the problem.
"""

from __future__ import annotations

import json
from json.scanner import make_scanner
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


# `json.loads` with hooks builds a decoder and its scanner per call, which costs more than scanning an event line:
# both scanners (C, the one `JSONDecoder.decode` runs after skipping whitespace) are built once
_STRICT = make_scanner(json.JSONDecoder(object_pairs_hook=_object, parse_int=_int))  # type: ignore[arg-type]
_PLAIN = make_scanner(json.JSONDecoder())  # type: ignore[arg-type]
_PLAIN_CHARS = 4_096  # the plain scan converts integers before they are judged: a few thousand digits at most
_BIG = 10 ** (MAX_INT_DIGITS - 1)  # an integer of fewer digits passes `_int` whatever its sign


def _keys(value: object) -> int:
    """Keys of every object in `value`, or -1 when an integer may be one `_int` rejects."""
    if isinstance(value, dict):
        n = len(value)
        for v in value.values():
            k = _keys(v)
            if k < 0:
                return -1
            n += k
        return n
    if isinstance(value, list):
        n = 0
        for v in value:
            k = _keys(v)
            if k < 0:
                return -1
            n += k
        return n
    if type(value) is int and not -_BIG < value < _BIG:
        return -1
    return 0


def loads(text: str | bytes) -> Any:
    """The value of `text`; `ValueError` for invalid JSON, duplicate keys, huge integers, deep nesting.

    A short line that is one object with nothing around it (every event line) is scanned directly, first without
    hooks (dicts and ints built in C): every key is followed by its own ":", so as many keys in the objects as
    ":" in the text means none was a duplicate, and small integers passed `_int`. Otherwise the hooked scanner
    decides, and any failure takes `json.loads`' full path, so every message stays that of `json.loads`."""
    try:
        if type(text) is str and text[:1] == "{" and len(text) <= _PLAIN_CHARS:
            try:
                value, end = _PLAIN(text, 0)
                if end == len(text):
                    return value if _keys(value) == text.count(":") else _STRICT(text, 0)[0]
            except Exception:  # the full path below raises the error json.loads gives
                pass
        return json.loads(text, object_pairs_hook=_object, parse_int=_int)
    except RecursionError:
        raise ValueError("nested too deeply") from None
