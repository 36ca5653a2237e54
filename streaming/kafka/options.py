"""Kafka client settings in Kafka's own property names (``security.protocol``, ``sasl.jaas.config``, ...) mapped
to kafka-python keyword arguments.

Users copy settings from their Java clients; kafka-python spells them differently (``security_protocol``) and
takes PEM files instead of JKS stores. One mapping serves the CLI (``--kafka-option k=v``), the Spark source and
the sink (``kafka.*`` options), so every entry point accepts the same names and rejects unknown ones loudly.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer

_CLIENTS = {"consumer": KafkaConsumer, "producer": KafkaProducer, "admin": KafkaAdminClient}

# Kafka property name -> kafka-python name, where the generic "dots to underscores" rule is wrong.
_RENAMES = {
    "ssl.truststore.location": "ssl_cafile",  # PEM only (ssl.truststore.type=PEM)
    "ssl.keystore.location": "ssl_certfile",  # PEM only (ssl.keystore.type=PEM)
    "ssl.key.location": "ssl_keyfile",
    "ssl.key.password": "ssl_password",
    "ssl.keystore.password": "ssl_password",
    "ssl.cipher.suites": "ssl_ciphers",
    "ssl.crl.location": "ssl_crlfile",
    "sasl.kerberos.service.name": "sasl_kerberos_service_name",
    "max.in.flight.requests.per.connection": "max_in_flight_requests_per_connection",
    "transaction.timeout.ms": "transaction_timeout_ms",
}
# Accepted for compatibility with Java configs but meaningless to kafka-python.
_IGNORED = {"ssl.truststore.type", "ssl.keystore.type", "ssl.truststore.password", "ssl.protocol",
            "ssl.enabled.protocols", "key.serializer", "value.serializer", "key.deserializer",
            "value.deserializer"}
_JAAS = re.compile(r"""(\w+)\s*=\s*"((?:[^"\\]|\\.)*)\"""")
_MAX_VALUE_LEN = 4096


def kafka_client_options(options: Mapping[str, str]) -> dict[str, str]:
    """The ``kafka.*`` options of a Spark data source without their prefix, in Kafka's property names."""
    return {k[len("kafka."):]: v for k, v in options.items() if k.startswith("kafka.")}


def parse_cli_options(pairs: Iterable[str]) -> dict[str, str]:
    """``["security.protocol=SSL", ...]`` -> dict; ValueError names the malformed entry."""
    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"--kafka-option {pair!r}: expected KEY=VALUE")
        out[key.strip()] = value
    return out


def _coerce(name: str, value: Any, default: Any) -> Any:
    if not isinstance(value, str):
        return value
    if len(value) > _MAX_VALUE_LEN:
        raise ValueError(f"Kafka option {name!r}: value longer than {_MAX_VALUE_LEN} characters")
    if isinstance(default, bool) or value.lower() in ("true", "false"):
        if value.lower() not in ("true", "false"):
            raise ValueError(f"Kafka option {name!r}: expected true/false, got {value!r}")
        return value.lower() == "true"
    if isinstance(default, int) or (default is None and re.fullmatch(r"-?\d+", value)):
        try:
            return int(value)
        except ValueError:
            raise ValueError(f"Kafka option {name!r}: expected an integer, got {value!r}") from None
    if isinstance(default, float):
        return float(value)
    return value


def to_kafka_python(options: Mapping[str, Any], client: str) -> dict[str, Any]:
    """Map Kafka property names (``bootstrap.servers``, ``sasl.jaas.config``...) to kwargs for ``client``
    (``consumer``, ``producer`` or ``admin``). Options another client kind understands are dropped (one option
    set serves all three); names no client knows raise ValueError listing the name."""
    cls = _CLIENTS[client]
    known_anywhere = set().union(*(c.DEFAULT_CONFIG for c in _CLIENTS.values()))
    out: dict[str, Any] = {}
    for name, value in options.items():
        if name in _IGNORED:
            continue
        if name == "sasl.jaas.config":
            fields = {k: re.sub(r"\\(.)", r"\1", v) for k, v in _JAAS.findall(str(value))}
            if "username" not in fields or "password" not in fields:
                raise ValueError("Kafka option 'sasl.jaas.config': expected username=\"...\" password=\"...\"")
            out["sasl_plain_username"], out["sasl_plain_password"] = fields["username"], fields["password"]
            continue
        if name == "ssl.endpoint.identification.algorithm":
            out["ssl_check_hostname"] = bool(str(value).strip())
            continue
        py_name = _RENAMES.get(name, name.replace(".", "_").replace("-", "_"))
        if py_name not in known_anywhere:
            raise ValueError(f"unknown Kafka option {name!r} (kafka-python has no {py_name!r})")
        if py_name in cls.DEFAULT_CONFIG:
            out[py_name] = _coerce(name, value, cls.DEFAULT_CONFIG[py_name])
    if "bootstrap_servers" not in out:
        raise ValueError("Kafka option 'bootstrap.servers' is required")
    return out
