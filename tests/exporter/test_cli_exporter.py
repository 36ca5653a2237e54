"""`rebalance exporter` argument checks: bad usage exits 2 with one line naming the option, before any I/O."""

from __future__ import annotations

import pytest

from streaming.cli.main import main


@pytest.mark.parametrize("args, message", [
    (["--max-groups", "0"], "--max-groups: expected a positive integer, got 0"),
    (["--groups", "orders-("], "--groups: not a regular expression"),
    (["--port", "70000"], "--port: expected 0-65535, got 70000"),
    (["--kafka-option", "no-equals-sign"], "expected KEY=VALUE"),
    (["--kafka-option", "not.a.kafka.option=1"], "unknown Kafka option 'not.a.kafka.option'"),
])
def test_bad_usage_is_exit_code_2(args, message, capsys):
    assert main(["exporter", "--bootstrap", "127.0.0.1:1", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("rebalance exporter: ") and message in err and len(err.splitlines()) == 1


def test_help_names_the_bound_and_the_defaults(capsys):
    with pytest.raises(SystemExit):
        main(["exporter", "--help"])
    out = capsys.readouterr().out
    assert "--max-groups N" in out and "__other__" in out and "9464" in out and "rebalance.conformance" in out
    assert "--web-config FILE" in out and "exporter-toolkit" in out
