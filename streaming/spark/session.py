"""The one place a SparkSession is configured, with the project's Python data sources registered.

The settings follow the project's PySpark 4.3 measurements (docs/spark-notes.md §3): few shuffle partitions
(frozen into a checkpoint on its first run), RocksDB state with changelog checkpointing (cheaper commits,
state off-heap), UTC session time (Arrow timestamp conversion depends on it), Python worker reuse
(per-worker Kafka clients).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import signal
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from pyspark.sql import SparkSession

from streaming.spark.java import ensure_java

JAVA_OPTIONS = "spark.driver.extraJavaOptions"
JVM_FLAGS = "-XX:MaxMetaspaceSize=256m"  # a ceiling for class metadata (Spark's classes and the code it generates)
BASE_CONF = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    # memory bounds (docs/spark-notes.md §5, measured with bench.soak): the heap the driver JVM may commit (in
    # local mode it is also the executor); RocksDB's block cache and memtables for every state store together
    "spark.driver.memory": "1g",
    "spark.sql.streaming.stateStore.rocksdb.boundedMemoryUsage": "true",
    "spark.sql.streaming.stateStore.rocksdb.maxMemoryUsageMB": "256",
    # what Spark's status store keeps of finished jobs, stages, tasks and SQL executions (kept even with the UI
    # off; a service runs a few per micro-batch, so the defaults of 1,000 / 100,000 fill the heap for hours)
    "spark.ui.retainedJobs": "100",
    "spark.ui.retainedStages": "100",
    "spark.ui.retainedTasks": "2000",
    "spark.sql.ui.retainedExecutions": "50",
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.streaming.stateStore.providerClass":
        "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider",
    "spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled": "true",
    "spark.sql.streaming.minBatchesToRetain": "10",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    "spark.sql.execution.arrow.maxRecordsPerBatch": "10000",
    "spark.python.worker.reuse": "true",
    # the Python workers' daemon with SIGINT blocked: Ctrl-C is the command's to handle (worker_daemon.py)
    "spark.python.daemon.module": "streaming.spark.worker_daemon",
    "spark.python.authenticate.socketTimeout": "120s",  # default 15s: Python workers miss it on a loaded box
    "spark.sql.adaptive.enabled": "false",  # keep the shuffle partition count the checkpoint recorded
    "spark.sql.streaming.forceDeleteTempCheckpointLocation": "true",
}


# Spark's default log4j2 profile logs INFO to the console until setLogLevel runs; start at WARN instead.
_LOG4J2 = """\
rootLogger.level = warn
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n%ex
logger.nativeio.name = org.apache.hadoop.util.NativeCodeLoader
logger.nativeio.level = error
logger.python.name = org.apache.spark.api.python
logger.python.level = error
# "write ... is aborting/aborted" on every stopped or failed batch: the failure itself reaches the command
logger.v2write.name = org.apache.spark.sql.execution.datasources.v2.WriteToDataSourceV2Exec
logger.v2write.level = off
# a task cancelled by a stopping query (Ctrl-C) or failing: "Aborting task" with its Java trace, "Aborting commit
# for partition ..."; the failure itself reaches the command, a cancellation is no failure
logger.datawriting.name = org.apache.spark.sql.execution.datasources.v2.DataWritingSparkTask
logger.datawriting.level = off
logger.utils.name = org.apache.spark.util.Utils
logger.utils.filter.aborting.type = RegexFilter
logger.utils.filter.aborting.regex = Aborting task.*
logger.utils.filter.aborting.onMatch = DENY
logger.utils.filter.aborting.onMismatch = NEUTRAL
# "Query ... terminated with error" and its Java trace: the command reports the failure in one line
logger.microbatch.name = org.apache.spark.sql.execution.streaming.runtime.MicroBatchExecution
logger.microbatch.level = off
"""


def _log4j2_file() -> str:
    digest = hashlib.sha1(_LOG4J2.encode()).hexdigest()[:10]  # a changed profile gets a file of its own
    path = os.path.join(tempfile.gettempdir(), f"rebalance-log4j2-{os.getuid()}-{digest}.properties")
    if not os.path.exists(path):
        with open(path + ".tmp", "w") as f:
            f.write(_LOG4J2)
        os.replace(path + ".tmp", path)
    return path


def build_spark(app_name: str = "rebalance-replay", *, shuffle_partitions: int = 2, master: str = "local[2]",
                extra_conf: Mapping[str, str] | None = None) -> SparkSession:
    """Get or create the session; ``extra_conf`` overrides the defaults (e.g. a cluster's memory settings).

    The JVM is the user's Java if suitable, else the bundled one (`streaming.spark.java.ensure_java`)."""
    ensure_java()
    os.environ.setdefault("PYARROW_IGNORE_TIMEZONE", "1")
    # Python workers must run this interpreter (the venv with kafka-python), not whatever `python3` is on PATH.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    if master.startswith("local"):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")  # no network exposure, no hostname warning
    builder = SparkSession.builder.appName(app_name).master(master)
    extra = dict(extra_conf or {})
    # the caller's JVM flags come after ours (the last of a repeated flag wins) instead of dropping the log profile
    java_options = f"-Dlog4j2.configurationFile=file:{_log4j2_file()} {JVM_FLAGS} {extra.pop(JAVA_OPTIONS, '')}".strip()
    conf = {**BASE_CONF, "spark.sql.shuffle.partitions": str(shuffle_partitions),
            "spark.default.parallelism": str(shuffle_partitions), JAVA_OPTIONS: java_options, **extra}
    for key, value in conf.items():
        builder = builder.config(key, value)
    _launch_jvm({"spark.master": master, "spark.app.name": app_name, **conf})
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    register_data_sources(spark)
    _quiet_accumulator_server()
    return spark


def _launch_jvm(conf: Mapping[str, str]) -> None:
    """Start the driver JVM (unless this process has one: PySpark keeps it across sessions) with Ctrl-C held
    off until it answers, then stopped if Ctrl-C came meanwhile.

    PySpark's own start, interrupted while the JVM boots, deletes the connection file the JVM is about to
    write: the JVM then prints a Java trace after the command's "interrupted" line and stays behind, an
    orphan. A JVM that answers ends when this process does (it watches its stdin), so from here on Ctrl-C
    may interrupt anything. The launch is PySpark's (`launch_gateway`, with the settings a session builder
    would pass); `SparkContext._ensure_initialized` hands the gateway to the session the builder makes."""
    from pyspark import SparkConf, SparkContext
    from pyspark.java_gateway import launch_gateway

    if SparkContext._gateway is not None:
        return
    with deferred_sigint(second_interrupts=False) as interrupted:
        gateway = launch_gateway(SparkConf(loadDefaults=False).setAll(list(conf.items())))
        if interrupted():
            gateway.proc.kill()
            gateway.proc.wait()
            raise KeyboardInterrupt
    SparkContext._ensure_initialized(gateway=gateway)


@contextlib.contextmanager
def deferred_sigint(*, second_interrupts: bool) -> Iterator[Callable[[], bool]]:
    """While active (in the main thread), SIGINT only sets the flag the context yields; a second one
    interrupts at once when `second_interrupts`, else it is held off too."""
    if threading.current_thread() is not threading.main_thread():
        yield lambda: False
        return
    hits: list[int] = []

    def handler(signum: int, frame: Any) -> None:
        hits.append(signum)
        if second_interrupts:
            signal.signal(signal.SIGINT, signal.default_int_handler)

    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield lambda: bool(hits)
    finally:
        signal.signal(signal.SIGINT, previous)


def _quiet_accumulator_server() -> None:
    """PySpark's accumulator server prints a socketserver traceback when the JVM drops its connection while
    the process stops (seen on Ctrl-C); the project uses no accumulators, so that report is only noise."""
    from pyspark import accumulators

    def ignore(self: object, request: object, client_address: object) -> None:
        del self, request, client_address

    for name in ("AccumulatorTCPServer", "AccumulatorUnixServer"):
        server = getattr(accumulators, name, None)
        if server is not None:
            server.handle_error = ignore


def register_data_sources(spark: SparkSession) -> list[str]:
    """Register the project's Python data sources; returns their format names."""
    from streaming.spark.jsonl_sink import FilesDataSource
    from streaming.spark.jsonl_source import JsonlDataSource
    from streaming.spark.kafka_sink import KafkaEosDataSource
    from streaming.spark.kafka_source import KafkaDataSource

    sources = (KafkaDataSource, KafkaEosDataSource, JsonlDataSource, FilesDataSource)
    for source in sources:
        spark.dataSource.register(source)
    return [source.name() for source in sources]
