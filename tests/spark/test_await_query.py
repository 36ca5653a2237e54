"""`job.await_query`'s bookkeeping over a scripted query (the Spark side is covered by the integration
tests): every batch counted once, and a broker outage reported while it lasts."""

from __future__ import annotations

import io
from typing import Any

from streaming.spark.job import await_query


class ScriptedQuery:
    """Progress reports appear one poll at a time, as `StreamingQuery.recentProgress` accumulates them."""

    def __init__(self, script: list[list[dict[str, Any]]]) -> None:
        self.script, self.recentProgress = script, []
        self.status = {"isTriggerActive": False}

    def awaitTermination(self, timeout: float) -> bool:
        if self.script:
            self.recentProgress = self.recentProgress + self.script.pop(0)
        return not self.script

    def stop(self) -> None:
        self.script = []


def progress(batch: int, second: int, rows: int) -> dict[str, Any]:
    return {"batchId": batch, "timestamp": f"2026-11-23T21:00:{second:02d}.000Z", "numInputRows": rows,
            "sources": [], "durationMs": {"triggerExecution": 5}}


def test_the_first_batch_after_an_idle_spell_is_counted() -> None:
    """After idling, Spark reports the coming batch id with no rows, then that batch under the same id."""
    out = io.StringIO()
    script = [[progress(0, 1, 5)], [progress(1, 2, 0)], [progress(1, 3, 7)], [progress(2, 4, 3)], []]
    assert await_query(ScriptedQuery(script), "serve", poll_s=0, out=out) == 15
    assert [line.split(":")[0] for line in out.getvalue().splitlines()] == [
        "[serve] batch 0", "[serve] batch 1", "[serve] batch 2"]


def test_an_outage_is_reported_while_it_lasts() -> None:
    answers = iter(["Kafka at h:1 unreachable (timed out)", "Kafka at h:1 unreachable (timed out)", None, None])
    out = io.StringIO()
    await_query(ScriptedQuery([[], [], [], []]), "serve", poll_s=0, heartbeat_s=0, out=out,
                probe=lambda: next(answers))
    lines = out.getvalue().splitlines()
    warning = "[serve] WARNING: Kafka at h:1 unreachable (timed out)"
    assert [line.split(" for ")[0] for line in lines[:2]] == [warning] * 2
    assert lines[0].endswith("s; batches wait and resume when it is back")
    assert lines[2].startswith("[serve] back after ") and len(lines) == 3


def test_the_first_batch_after_a_restart_shows_the_lag() -> None:
    """A batch re-run after a restart comes without `latestOffset` (Spark did not plan it in this run): the
    service's log end fills in; without one the line says why the lag is unknown instead of `lag ?`."""
    source = {"endOffset": '{"events": {"0": 40, "1": 12}}', "latestOffset": "null"}  # as PySpark 4.3 gives them
    rerun = {**progress(3, 1, 52), "sources": [source]}
    planned = {**progress(4, 2, 8), "sources": [{**source, "latestOffset": '{"events": {"0": 45, "1": 20}}'}]}
    out = io.StringIO()
    await_query(ScriptedQuery([[rerun], [planned], []]), "serve", poll_s=0, out=out,
                log_end=lambda: {"events": {"0": 50, "1": 30}})
    assert [line.rsplit(", ", 1)[1] for line in out.getvalue().splitlines()] == ["lag 28", "lag 13"]

    out = io.StringIO()
    await_query(ScriptedQuery([[rerun], []]), "serve", poll_s=0, out=out)
    assert out.getvalue().endswith("lag unknown (a batch planned before the restart: the log end was not read)\n")
