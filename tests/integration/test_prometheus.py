"""`rebalance exporter` scraped by a real Prometheus server (Debian's `prometheus`, which test.sh installs; a
missing binary fails this test), queried through Prometheus's HTTP API.

The diffs topic is filled with the diff records of four bundled histories, of a small captured log
(generation events: the `observed` strategy, a gap of skipped generations; captured traffic) and of a
group whose keyed topic grows (load in msgs/s, keys moved; contract §7), replayed by the plain-Python
pipeline (`streaming.core.local`) and produced the way the exactly-once sink writes them: keyed by group,
inside committed transactions. Spark is left out on purpose: `serve` writes the same records (tested by
test_replay_vs_serve.py), and a Spark run would only cost this 2-core machine a minute. An aborted
transaction and an undecodable record go in too. The conformance topic gets what `rebalance conformance
--json` makes of the captured log (the service does not write conformance records to a topic yet).

The exporter runs twice: as by default (plain HTTP) and secured as docker-compose.yml shows it (a web config
with TLS, client certificates signed by a test CA and basic auth; Prometheus scrapes with `scheme: https`,
`tls_config` and `basic_auth`), each scraped by its own Prometheus; both must serve the same.

Checked: per group and strategy, the counters Prometheus stored equal the sums over the committed diff
records (the aborted ones are not counted, the bad one is a decode error); every PromQL expression of every
dashboard panel and variable is valid and returns data for the bundled histories.
"""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from dashboard_queries import expand, load_dashboard, panel_queries, variable_queries
from web_tls import PASSWORD, USER, bcrypt_hash, make_pki, write_web_config

from bench.exporter import ExporterProcess, produce_transaction, wait_for
from streaming.cli.conformance import check_log
from streaming.core.config import PipelineConfig, parse_strategies
from streaming.core.local import read_jsonl, replay
from streaming.demo.local_broker import free_port
from whatif.histories import sample_path

pytestmark = pytest.mark.kafka

HISTORIES = ("rolling-deploy", "flapping-member", "static-restarts", "mixed-subscriptions")
DRILL_DOWN_GROUP = "orders-app"  # the captured group below: strategies, observed and conformance
GROWTH_GROUP = "clicks-app"  # keyed traffic on a topic that grows: keys_moved


def captured_log(path: Path) -> Path:
    """A captured group as `rebalance capture` writes it (contract §5): range generations as the leader
    recorded them, a gap of two generations, one assignment that is not Kafka's, one in-house protocol."""
    def gen(n: int, protocol: str, assigned: dict[str, list[int]], ts: int) -> dict[str, Any]:
        return {"group": DRILL_DOWN_GROUP, "type": "generation", "generation": n, "protocol_type": "consumer",
                "protocol": protocol, "leader": "c-1", "ts": ts,
                "members": {m: {"topics": ["orders"], "assigned": {"orders": parts}} for m, parts in assigned.items()}}

    ts = 1_732_200_000_000
    events = [{"group": DRILL_DOWN_GROUP, "type": "partitions", "partitions": {"orders": 6}, "ts": ts},
              {"group": DRILL_DOWN_GROUP, "type": "traffic", "topic": "orders", "rates": [310.5, 80, 0, 120, 45, 12],
               "ts": ts},  # as `rebalance capture --traffic-interval` writes it
              gen(1, "range", {"c-1": [0, 1, 2], "c-2": [3, 4, 5]}, ts + 1000),
              gen(2, "range", {"c-1": [0, 1], "c-2": [2, 3], "c-3": [4, 5]}, ts + 2000),
              gen(5, "range", {"c-1": [0, 1, 2, 5], "c-3": [3, 4]}, ts + 3000),
              gen(6, "in-house", {"c-1": [0, 1, 2], "c-3": [3, 4, 5]}, ts + 4000)]
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    return path


def growth_log(path: Path) -> Path:
    """Keyed traffic with a hot key on a topic that grows from 4 to 6 partitions under it."""
    ts = 1_732_200_000_000
    events = [{"group": GROWTH_GROUP, "type": "partitions", "partitions": {"clicks": 4}, "ts": ts},
              *({"group": GROWTH_GROUP, "type": "join", "member": m, "topics": ["clicks"], "ts": ts + n * 1000}
                for n, m in enumerate(("c-1", "c-2", "c-3"), 1)),
              {"group": GROWTH_GROUP, "type": "traffic", "topic": "clicks", "rate": 2000, "null_share": 0.2,
               "keys": {"user-1": 10, "user-2": 3, "user-3": 1, "user-4": 1, "user-5": 1}, "ts": ts + 4000},
              {"group": GROWTH_GROUP, "type": "partitions", "partitions": {"clicks": 6}, "ts": ts + 5000}]
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    return path


def pipeline_records(log: Path) -> tuple[list[bytes], list[bytes]]:
    """(diff records of the bundled histories, the captured log and the growth log, conformance records of the
    captured log)."""
    config = PipelineConfig(strategies=parse_strategies("all"))
    logs = [*(sample_path(name) for name in HISTORIES), log, growth_log(log.with_name("growth.jsonl"))]
    diffs = [r.value for path in logs
             for r in replay(read_jsonl(path), config, max_events_per_batch=None) if r.kind == "diff"]
    out = io.StringIO()
    check_log(str(log), out, io.StringIO(), as_json=True)
    return diffs, [line.encode() for line in out.getvalue().splitlines()]


def expected_sums(values: list[bytes]) -> dict[str, dict[tuple[str, str], int]]:
    out: dict[str, dict[tuple[str, str], int]] = defaultdict(lambda: defaultdict(int))
    for r in map(json.loads, values):
        key = (r["group"], r["strategy"])
        out["rebalance_partitions_moved_total"][key] += r["moves"]
        out["rebalance_moves_beyond_minimum_total"][key] += r["moves"] - r["min_moves"]
        out["rebalance_partitions_paused_total"][key] += r["paused"]
        out["rebalance_rounds_total"][key] += r["phase"] != "replace"
    return out


class Prometheus:
    """A Prometheus server on loopback scraping `target` every second (with `scrape`'s settings: scheme,
    tls_config, basic_auth), with its own temporary storage."""

    def __init__(self, target: str, tmp: Path, scrape: dict[str, Any]) -> None:
        exe = shutil.which("prometheus")
        assert exe, "the real-Prometheus test needs Debian's `prometheus` package (test.sh installs it)"
        config = tmp / "prometheus.yml"
        config.write_text(json.dumps({  # JSON is YAML
            "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
            "scrape_configs": [{"job_name": "rebalance-exporter", "static_configs": [{"targets": [target]}],
                                **scrape}]}))
        self.url = f"http://127.0.0.1:{free_port()}"
        self.log = (tmp / "prometheus.log").open("wb")
        self.process = subprocess.Popen(
            [exe, f"--config.file={config}", f"--storage.tsdb.path={tmp / 'tsdb'}",
             f"--web.listen-address={self.url.removeprefix('http://')}"], stdout=self.log, stderr=subprocess.STDOUT)

    def ready(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.url}/-/ready", timeout=2) as r:
                return r.status == 200
        except OSError:
            assert self.process.poll() is None, "prometheus exited; see its log"
            return False

    def query(self, expr: str) -> list[dict[str, Any]]:
        """The instant vector of `expr` now; invalid PromQL fails with Prometheus's error."""
        url = f"{self.url}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
        try:
            with urllib.request.urlopen(url, timeout=10) as r:
                body = json.load(r)
        except urllib.error.HTTPError as exc:
            body = json.load(exc)
        assert body["status"] == "success", f"{expr}: {body.get('errorType')}: {body.get('error')}"
        return body["data"]["result"]

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)
        self.log.close()


@pytest.fixture(scope="module")
def topics(kafka_bootstrap: str, tmp_path_factory: pytest.TempPathFactory
           ) -> tuple[tuple[str, str], list[bytes], list[bytes]]:
    """((diffs topic, conformance topic), committed diffs, conformance records), written once for both scrapes."""
    from streaming.kafka.topics import ensure_topics

    suffix = time.time_ns()
    diffs_topic, conformance_topic = f"prom-diffs-{suffix}", f"prom-conformance-{suffix}"
    ensure_topics(kafka_bootstrap, {diffs_topic: 2, conformance_topic: 1})
    values, conformance = pipeline_records(captured_log(tmp_path_factory.mktemp("log") / "captured.jsonl"))
    produce_transaction(kafka_bootstrap, diffs_topic, values[: len(values) // 2])
    produce_transaction(kafka_bootstrap, diffs_topic, [values[0].replace(b'"moves":', b'"moves":1000')] * 5,
                           commit=False)
    produce_transaction(kafka_bootstrap, diffs_topic, [b"{not a diff record", *values[len(values) // 2:]])
    produce_transaction(kafka_bootstrap, conformance_topic, conformance)
    return (diffs_topic, conformance_topic), values, conformance


def secured(tmp: Path) -> tuple[list[str], dict[str, Any]]:
    """The secured set-up of docker-compose.yml and dashboards/prometheus.yml: the exporter's arguments (a web
    config with TLS, client certificates and basic auth) and the matching scrape settings."""
    pki = make_pki(tmp / "pki")
    web_config = write_web_config(tmp / "web-config.yml", pki, users={USER: bcrypt_hash(PASSWORD)}, mutual=True)
    (tmp / "password").write_text(PASSWORD)
    tls = {"ca_file": str(pki.ca), "cert_file": str(pki.client_cert), "key_file": str(pki.client_key)}
    scrape = {"scheme": "https", "tls_config": tls,
              "basic_auth": {"username": USER, "password_file": str(tmp / "password")}}
    return ["--web-config", str(web_config)], scrape


@pytest.fixture(scope="module", params=["http", "https"])
def scraped(request: pytest.FixtureRequest, kafka_bootstrap: str, topics: Any,
            tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Prometheus, list[bytes], list[bytes]]]:
    """Prometheus holding the exporter's series, scraped over plain HTTP or over TLS with a client certificate
    and basic auth; yields (prometheus, committed diffs, conformance records)."""
    (diffs_topic, conformance_topic), values, conformance = topics
    tmp = tmp_path_factory.mktemp(f"prometheus-{request.param}")
    args, scrape = secured(tmp) if request.param == "https" else ([], {})
    exporter = ExporterProcess(kafka_bootstrap, tmp / "exporter.log", "--diffs-topic", diffs_topic,
                               "--conformance-topic", conformance_topic, *args)
    assert exporter.url.startswith(f"{request.param}://")
    prometheus = Prometheus(f"127.0.0.1:{exporter.port}", tmp, scrape)
    try:
        wait_for(prometheus.ready, "prometheus ready")
        wait_for(lambda: prometheus.query("rebalance_exporter_caught_up == 1"), "exporter caught up, scraped")
        # rate() needs two samples in its window: a few more scrapes after the series appeared
        wait_for(lambda: prometheus.query("count_over_time(rebalance_rounds_total[1m]) >= 3"), "three scrapes")
        yield prometheus, values, conformance
    finally:
        prometheus.stop()
        print(exporter.stop())


def test_stored_counters_equal_the_sums_over_the_committed_diff_records(scraped):
    prometheus, values, conformance = scraped
    for metric, expected in expected_sums(values).items():
        stored = {(s["metric"]["group"], s["metric"]["strategy"]): int(float(s["value"][1]))
                  for s in prometheus.query(metric)}
        assert stored == dict(expected), metric
    assert len({g for g, _ in expected_sums(values)["rebalance_rounds_total"]}) == len(HISTORIES) + 2
    stopped: dict[tuple[str, str], float] = defaultdict(float)  # partition-seconds: halves of ms are exact
    for r in map(json.loads, values):
        if r.get("part", 1) == 1:
            stopped[r["group"], r["strategy"]] += r["stopped_ms"]
    stored_seconds = {(s["metric"]["group"], s["metric"]["strategy"]): float(s["value"][1])
                      for s in prometheus.query("rebalance_stopped_partition_seconds_total")}
    assert stored_seconds == {key: ms / 1000 for key, ms in stopped.items()}
    health = {s["metric"].get("topic", ""): float(s["value"][1])
              for s in prometheus.query('rebalance_exporter_decode_errors_total{topic=~"prom-diffs-.*"}')}
    assert list(health.values()) == [1.0]  # the bad record; the aborted transaction is never read
    records = prometheus.query('rebalance_exporter_records_total{topic=~"prom-diffs-.*"}')
    assert float(records[0]["value"][1]) == len(values)
    records = [json.loads(c) for c in conformance]
    assert [r["conforms"] for r in records] == [True, True, False, None]
    expected = {"checks": {"range": 3, "other": 1}, "mismatches": {"range": 1, "other": 0},
                "unknown": {"range": 0, "other": 1}}  # "in-house" is not a library protocol: "other"
    for metric, per_protocol in expected.items():
        stored = prometheus.query(f'rebalance_conformance_{metric}_total{{group="{DRILL_DOWN_GROUP}"}}')
        assert {s["metric"]["protocol"]: int(s["value"][1]) for s in stored} == per_protocol, metric
    skipped = prometheus.query(f'rebalance_skipped_generations_total{{group="{DRILL_DOWN_GROUP}",strategy="observed"}}')
    assert [s["value"][1] for s in skipped] == ["2"]


def test_every_dashboard_query_is_valid_and_returns_data(scraped):
    prometheus, _, _ = scraped
    dashboard = load_dashboard()
    values = {"group": DRILL_DOWN_GROUP, "strategy": ".*", "datasource": "prometheus",
              "__rate_interval": "1m", "__interval": "15s", "__range": "1h"}
    queries = [(f"variable {name}", expr) for name, expr in variable_queries(dashboard)]
    queries += [(f"{title} [{ref}]", expr) for title, ref, expr in panel_queries(dashboard)]
    assert len(queries) > 20
    empty = [title for title, expr in queries if not prometheus.query(expand(expr, values))]
    assert empty == []


def test_load_gauges_are_the_last_rounds_msgs_per_second(scraped):
    """rate_max / rate_min / rate_total of each (group, strategy)'s last round with traffic, and the keys moved
    by the growth of a topic with keyed traffic, as Prometheus stored them."""
    prometheus, values, _ = scraped
    last: dict[tuple[str, str], dict] = {}
    moved: dict[tuple[str, str], float] = {}
    for r in map(json.loads, values):
        last[(r["group"], r["strategy"])] = r
        moved.update({(r["group"], t): share for t, share in r.get("keys_moved", {}).items()})
    for field in ("rate_max", "rate_min", "rate_total"):
        stored = {(s["metric"]["group"], s["metric"]["strategy"]): float(s["value"][1])
                  for s in prometheus.query(f"rebalance_{field}_messages_per_second")}
        expected = {key: float(r[field]) for key, r in last.items() if field in r}
        assert stored == expected and {g for g, _ in expected} >= {DRILL_DOWN_GROUP, GROWTH_GROUP}, field
    stored = {(s["metric"]["group"], s["metric"]["topic"]): float(s["value"][1])
              for s in prometheus.query("rebalance_keys_moved_ratio")}
    assert stored == moved and (GROWTH_GROUP, "clicks") in stored
