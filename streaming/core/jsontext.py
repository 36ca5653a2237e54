"""Strict JSON text -> Python values, for input from outside (events, snapshots).

`json.loads` alone accepts duplicate keys (the last one silently wins: two `group` fields are an attack
shape, one value seen by a filter and another applied), converts integer literals of any length (thousands
of digits cost quadratic time, then fail with advice about interpreter settings), and raises
`RecursionError` on deep nesting. Here each of those is a `ValueError` naming the problem.
"""

from __future__ import annotations

import json
from json.scanner import make_scanner
from typing import Any, Final

import orjson

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
# this scanner (C, the one `JSONDecoder.decode` runs after skipping whitespace) is built once
_STRICT = make_scanner(json.JSONDecoder(object_pairs_hook=_object, parse_int=_int))  # type: ignore[arg-type]
_PLAIN_CHARS: Final = 4_096  # orjson converts integers before they are judged: a few thousand digits at most
_PLAIN_DEPTH: Final = 64  # far below where json.loads runs out of recursion, far above any event's nesting
_BIG: Final = 10 ** (MAX_INT_DIGITS - 1)  # an integer of fewer digits passes `_int` whatever its sign
_MINUS_BIG: Final = -_BIG


def _keys(value: dict[str, Any] | list[Any], depth: int = 0) -> int:
    """Keys of every object in `value`, or -1 when the strict scanner must judge it: a float (orjson reads an
    integer beyond 64 bits as one), an integer `_int` may reject, or deep nesting."""
    if depth == _PLAIN_DEPTH:
        return -1
    n = 0
    if isinstance(value, dict):
        n = len(value)
        for v in value.values():
            k = _value_keys(v, depth)
            if k < 0:
                return -1
            n += k
    else:
        for v in value:
            k = _value_keys(v, depth)
            if k < 0:
                return -1
            n += k
    return n


def _value_keys(v: object, depth: int) -> int:
    t = type(v)
    if t is str or t is bool or v is None:
        return 0
    if t is int:
        return 0 if _MINUS_BIG < v < _BIG else -1  # type: ignore[operator]
    if isinstance(v, (dict, list)):
        return _keys(v, depth + 1)
    return -1  # a float


def loads(text: str | bytes) -> Any:
    """The value of `text`; `ValueError` for invalid JSON, duplicate keys, huge integers, deep nesting.

    A short line that is one object (every event line) is read by orjson, which accepts strict JSON only, a
    subset of what `json.loads` accepts, with the same values for strings, small integers and structure. Every
    key is followed by its own ":", so as many keys in the objects as ":" in the text means none was a
    duplicate. Anything else goes to the strict scanner, then to `json.loads`' full path, so every accepted value
    and every error message stays that of `json.loads` with the hooks."""
    try:
        if type(text) is str and text[:1] == "{" and len(text) <= _PLAIN_CHARS:
            try:
                value = orjson.loads(text)
                if _keys(value) == text.count(":"):
                    return value
            except orjson.JSONDecodeError:
                pass
            try:
                value, end = _STRICT(text, 0)
                if end == len(text):
                    return value
            except Exception:  # the full path below raises the error json.loads gives
                pass
        return json.loads(text, object_pairs_hook=_object, parse_int=_int)
    except RecursionError:
        raise ValueError("nested too deeply") from None
