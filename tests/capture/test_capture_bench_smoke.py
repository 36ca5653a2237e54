"""Keeps `bench/capture_decode.py` from rotting: a tiny run of both measurements (no timing assertions)."""

from __future__ import annotations

import sys

from bench import capture_decode


def test_capture_bench_runs(monkeypatch, capsys) -> None:
    monkeypatch.setattr(sys, "argv", ["capture_decode", "--groups", "2", "--generations", "2", "--members", "3"])
    capture_decode.main()
    out = capsys.readouterr().out
    assert "records (" in out and "decode:" in out and "decode + translate:" in out


def test_bench_records_decode_and_translate_to_events() -> None:
    """The synthetic log is valid: every record decodes, each group generation gives one generation event."""
    from streaming.capture.coordinator_events import Translator, Undecodable

    log = capture_decode.build(groups=2, generations=3, members=4, commits=2)
    tr = Translator("__consumer_offsets", partition_count=lambda _t: 64)
    outs = [tr.record(k, v, 0, i, 0) for i, (k, v) in enumerate(log)]
    assert not any(isinstance(o, Undecodable) for o in outs)
    assert tr.stats["generation_events"] == 2 * 3 * 2  # classic + KIP-848 group, per generation
