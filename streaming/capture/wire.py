"""Kafka's request/response wire format, driven by a message schema declared as Kafka's JSON specs declare it.

`Field` mirrors one entry of an apache/kafka `clients/src/main/resources/common/message/*.json` spec (name,
type, versions, nullableVersions, default, nested fields); `Message` the spec itself (apiKey, validVersions,
flexibleVersions). `encode` / `decode` then follow the protocol's rules for the version asked:

- a field outside its versions is not on the wire (decoding gives its default);
- flexible versions use compact strings, bytes and arrays (unsigned varint length + 1, 0 = null) and end
  every struct with a tagged-field section (unsigned varint count, then tag, size, bytes per field);
  older versions use int16 string / int32 bytes and array lengths (-1 = null);
- `uuid` is 16 bytes. No field here is declared tagged, so a tagged section is read and skipped (a newer
  broker's additions), and written empty.

Request header v1 (v2 with a tagged section for flexible requests) and response header v0 (v1) as in
Kafka's RequestHeader.json / ResponseHeader.json. A decoded struct is a dict keyed by the schema's field
names. Bytes that do not follow the schema raise `WireError`.
"""

from __future__ import annotations

import base64
import struct
import uuid
from dataclasses import dataclass
from typing import Any

_FIXED = {"int8": struct.Struct(">b"), "int16": struct.Struct(">h"), "int32": struct.Struct(">i"),
          "int64": struct.Struct(">q")}
_ZERO: dict[str, Any] = {"int8": 0, "int16": 0, "int32": 0, "int64": 0, "bool": False, "string": "",
                         "bytes": b"", "uuid": uuid.UUID(int=0)}


class WireError(ValueError):
    """Bytes that do not follow the message schema (truncated, negative lengths, bad UTF-8, left over)."""


def _versions(spec: str) -> tuple[int, int]:
    """Kafka's version range syntax: "3+", "0-5", "2", "none"."""
    if spec == "none":
        return 1, 0
    if spec.endswith("+"):
        return int(spec[:-1]), 1 << 15
    low, _, high = spec.partition("-")
    return int(low), int(high or low)


@dataclass(frozen=True)
class Field:
    """One field of a message spec; `type` is Kafka's ("int32", "string", "[]int32", "[]Member", "Assignment"):
    a struct or array of structs carries its `fields`."""

    name: str
    type: str
    versions: str
    nullable_versions: str = "none"
    default: Any = None
    fields: tuple[Field, ...] = ()

    def present(self, version: int) -> bool:
        low, high = _versions(self.versions)
        return low <= version <= high

    def nullable(self, version: int) -> bool:
        low, high = _versions(self.nullable_versions)
        return low <= version <= high

    def default_value(self) -> Any:
        if self.default == "null":
            return None
        if self.default is not None:
            return int(self.default) if self.type.startswith("int") else self.default
        if self.type.startswith("[]"):
            return []
        if self.type in _ZERO:
            return _ZERO[self.type]
        return {f.name: f.default_value() for f in self.fields}


@dataclass(frozen=True)
class Message:
    """One request or response spec."""

    name: str
    api_key: int
    valid_versions: str
    flexible_versions: str
    fields: tuple[Field, ...]

    def valid(self, version: int) -> bool:
        low, high = _versions(self.valid_versions)
        return low <= version <= high

    def flexible(self, version: int) -> bool:
        low, high = _versions(self.flexible_versions)
        return low <= version <= high

    @property
    def max_version(self) -> int:
        return _versions(self.valid_versions)[1]


def kafka_topic_id(value: uuid.UUID) -> str:
    """A topic id as Kafka prints it (URL-safe base64, no padding), as the coordinator-record decoder gives it."""
    return base64.urlsafe_b64encode(value.bytes).decode("ascii").rstrip("=")


# ---------------------------------------------------------------------------------------------- writing

def _uvarint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _write_length(out: bytearray, n: int | None, flexible: bool, wide: bool) -> None:
    """A string (wide=False: int16), bytes or array (wide=True: int32) length; None = null."""
    if flexible:
        out += _uvarint(0 if n is None else n + 1)
    else:
        out += (_FIXED["int32"] if wide else _FIXED["int16"]).pack(-1 if n is None else n)


def _write_value(out: bytearray, f: Field, kind: str, value: Any, version: int, flexible: bool) -> None:
    if kind in _FIXED:
        out += _FIXED[kind].pack(value)
    elif kind == "bool":
        out.append(1 if value else 0)
    elif kind == "uuid":
        out += value.bytes
    elif kind == "string":
        data = None if value is None else value.encode("utf-8")
        _write_length(out, None if data is None else len(data), flexible, wide=False)
        out += data or b""
    elif kind == "bytes":
        _write_length(out, None if value is None else len(value), flexible, wide=True)
        out += value or b""
    else:
        _write_struct(out, f.fields, value, version, flexible)


def _write_struct(out: bytearray, fields: tuple[Field, ...], values: dict[str, Any], version: int,
                  flexible: bool) -> None:
    for f in fields:
        if not f.present(version):
            continue
        value = values.get(f.name, f.default_value())
        if value is None and not f.nullable(version):
            value = f.default_value()
        if f.type.startswith("[]"):
            _write_length(out, None if value is None else len(value), flexible, wide=True)
            for item in value or ():
                _write_value(out, f, f.type[2:], item, version, flexible)
        else:
            _write_value(out, f, f.type, value, version, flexible)
    if flexible:
        out += _uvarint(0)  # no tagged fields


def encode(message: Message, version: int, values: dict[str, Any]) -> bytes:
    """The message body at `version` (fields missing from `values` take their defaults)."""
    if not message.valid(version):
        raise ValueError(f"{message.name} has no version {version}")
    out = bytearray()
    _write_struct(out, message.fields, values, version, message.flexible(version))
    return bytes(out)


def request_header(api_key: int, version: int, correlation_id: int, client_id: str | None, flexible: bool) -> bytes:
    """Request header v1, or v2 (a trailing empty tagged section) for a flexible request; client_id stays an
    int16-length string in both."""
    out = bytearray(struct.pack(">hhi", api_key, version, correlation_id))
    _write_length(out, None if client_id is None else len(client_id.encode("utf-8")), False, wide=False)
    out += (client_id or "").encode("utf-8")
    if flexible:
        out += _uvarint(0)
    return bytes(out)


# ---------------------------------------------------------------------------------------------- reading

class Reader:
    """A cursor over received bytes."""

    def __init__(self, data: bytes) -> None:
        self.data = memoryview(data)
        self.pos = 0

    def take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise WireError(f"truncated: {n} bytes wanted at byte {self.pos} of {len(self.data)}")
        out = bytes(self.data[self.pos:self.pos + n])
        self.pos += n
        return out

    def fixed(self, kind: str) -> int:
        codec = _FIXED[kind]
        return codec.unpack(self.take(codec.size))[0]

    def uvarint(self) -> int:
        shift = n = 0
        while True:
            if shift > 28:
                raise WireError(f"unsigned varint longer than 5 bytes at byte {self.pos}")
            b = self.take(1)[0]
            n |= (b & 0x7F) << shift
            if not b & 0x80:
                return n
            shift += 7

    def length(self, flexible: bool, wide: bool) -> int | None:
        n = self.uvarint() - 1 if flexible else self.fixed("int32" if wide else "int16")
        if n < -1:
            raise WireError(f"negative length {n} at byte {self.pos}")
        return None if n == -1 else n

    def skip_tagged(self) -> None:
        for _ in range(self.uvarint()):
            self.uvarint()  # tag
            self.take(self.uvarint())

    def done(self) -> None:
        if self.pos != len(self.data):
            raise WireError(f"{len(self.data) - self.pos} bytes left over after the message")


def _read_value(r: Reader, f: Field, kind: str, version: int, flexible: bool, nullable: bool) -> Any:
    if kind in _FIXED:
        return r.fixed(kind)
    if kind == "bool":
        return r.take(1) != b"\x00"
    if kind == "uuid":
        return uuid.UUID(bytes=r.take(16))
    if kind in ("string", "bytes"):
        n = r.length(flexible, wide=kind == "bytes")
        if n is None:
            if not nullable:
                raise WireError(f"{f.name}: null, but the field is not nullable in version {version}")
            return None
        raw = r.take(n)
        if kind == "bytes":
            return raw
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise WireError(f"{f.name}: not UTF-8 ({exc.reason})") from None
    return _read_struct(r, f.fields, version, flexible)


def _read_struct(r: Reader, fields: tuple[Field, ...], version: int, flexible: bool) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for f in fields:
        if not f.present(version):
            out[f.name] = f.default_value()
        elif f.type.startswith("[]"):
            n = r.length(flexible, wide=True)
            if n is None:
                if not f.nullable(version):
                    raise WireError(f"{f.name}: null array, but the field is not nullable in version {version}")
                out[f.name] = None
            else:
                out[f.name] = [_read_value(r, f, f.type[2:], version, flexible, False) for _ in range(n)]
        else:
            out[f.name] = _read_value(r, f, f.type, version, flexible, f.nullable(version))
    if flexible:
        r.skip_tagged()
    return out


def decode(message: Message, version: int, data: bytes) -> dict[str, Any]:
    """The message body of `version` in `data` (all of it)."""
    r = Reader(data)
    out = _read_struct(r, message.fields, version, message.flexible(version))
    r.done()
    return out


def response_correlation(data: bytes, flexible: bool) -> tuple[int, bytes]:
    """(correlation id, body) of a response: header v0, or v1 (a tagged section) for a flexible response."""
    r = Reader(data)
    correlation_id = r.fixed("int32")
    if flexible:
        r.skip_tagged()
    return correlation_id, data[r.pos:]
