"""Kafka property names -> kafka-python keyword arguments (pure, no broker)."""

from __future__ import annotations

import pytest

from streaming.kafka.options import parse_cli_options, to_kafka_python


def test_security_settings_map_to_kafka_python_names_and_types():
    options = {
        "bootstrap.servers": "b1:9093,b2:9093",
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.jaas.config": 'org.apache.kafka.common.security.scram.ScramLoginModule required '
                            'username="svc" password="p\\"w";',
        "ssl.truststore.location": "/certs/ca.pem",
        "ssl.truststore.type": "PEM",
        "ssl.endpoint.identification.algorithm": "",
        "request.timeout.ms": "45000",
        "enable.idempotence": "true",  # producer-only: dropped for a consumer
    }
    consumer = to_kafka_python(options, "consumer")
    assert consumer == {
        "bootstrap_servers": "b1:9093,b2:9093", "security_protocol": "SASL_SSL",
        "sasl_mechanism": "SCRAM-SHA-512", "sasl_plain_username": "svc", "sasl_plain_password": 'p"w',
        "ssl_cafile": "/certs/ca.pem", "ssl_check_hostname": False, "request_timeout_ms": 45000,
    }
    assert to_kafka_python(options, "producer")["enable_idempotence"] is True


def test_unknown_or_malformed_options_are_rejected_with_their_name():
    with pytest.raises(ValueError, match=r"'bootstrap\.servers' is required"):
        to_kafka_python({"security.protocol": "SSL"}, "admin")
    with pytest.raises(ValueError, match=r"unknown Kafka option 'sasl\.usernme'"):
        to_kafka_python({"bootstrap.servers": "b:9092", "sasl.usernme": "x"}, "consumer")
    with pytest.raises(ValueError, match=r"'request\.timeout\.ms': expected an integer"):
        to_kafka_python({"bootstrap.servers": "b:9092", "request.timeout.ms": "soon"}, "consumer")
    with pytest.raises(ValueError, match="expected KEY=VALUE"):
        parse_cli_options(["security.protocol"])
    assert parse_cli_options(["a.b=c=d", " x = y"]) == {"a.b": "c=d", "x": " y"}
