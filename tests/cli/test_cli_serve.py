"""`rebalance serve`'s settings as the command line gives them to the service (Spark and Kafka replaced: what
is checked is the argument handling; the service itself runs in tests/integration/test_serve_command.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def test_serve_works_off_a_backlog_in_bounded_batches(tmp_path: Path, monkeypatch) -> None:
    """Without --max-events-per-batch, serve reads at most `DEFAULT_BATCH` events per micro-batch, so what a
    batch holds does not grow with the backlog it finds (a restart after an outage)."""
    import streaming.kafka.topics
    import streaming.spark.pipelines
    import streaming.spark.session
    from streaming.cli.main import main
    from streaming.cli.usage import DEFAULT_BATCH

    seen = {}
    monkeypatch.setattr(streaming.kafka.topics, "ensure_serve_topics", lambda *a, **k: None)
    monkeypatch.setattr(streaming.spark.session, "build_spark", lambda **k: None)
    monkeypatch.setattr(streaming.spark.pipelines, "serve_events", lambda *a, **k: seen.update(k) or 0)
    assert main(["serve", "--bootstrap", "h:1", "--checkpoint", str(tmp_path / "ckpt")]) == 0
    assert seen["max_events_per_batch"] == DEFAULT_BATCH == 2_000
    assert main(["serve", "--bootstrap", "h:1", "--checkpoint", str(tmp_path / "ckpt"),
                 "--max-events-per-batch", "50"]) == 0
    assert seen["max_events_per_batch"] == 50


def test_a_lost_jvm_is_not_reported_by_py4j_on_the_root_logger(tmp_path):
    """py4j's `GatewayClient.send_command` reports a dead JVM with `logging.exception` on the root logger (a
    traceback on stderr next to `main`'s one line); after `quiet_libraries` only other code's records print."""
    (tmp_path / "py4j").mkdir()
    (tmp_path / "py4j" / "gateway.py").write_text(
        "import logging\n"
        "def send():\n"
        "    try:\n"
        "        raise ConnectionResetError(104, 'Connection reset by peer')\n"
        "    except ConnectionResetError:\n"
        "        logging.exception('Exception while sending command.')\n")
    script = ("import logging, runpy\n"
              "from streaming.cli.main import quiet_libraries\n"
              "quiet_libraries()\n"
              f"runpy.run_path({str(tmp_path / 'py4j' / 'gateway.py')!r})['send']()\n"
              "logging.error('ours')\n")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60,
                          cwd=Path(__file__).resolve().parents[2])
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == "ERROR:root:ours\n"
