"""The row schemas the job's data sources and sinks share, declared once.

Both sources (Kafka and JSONL files) produce Spark's built-in Kafka source schema, so the job reads either
unchanged; both sinks take the job's output rows (`topic`, `key`, `value`).
"""

from __future__ import annotations

from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

SOURCE_SCHEMA = StructType([
    StructField("key", BinaryType()), StructField("value", BinaryType()), StructField("topic", StringType()),
    StructField("partition", IntegerType()), StructField("offset", LongType()),
    StructField("timestamp", TimestampType()), StructField("timestampType", IntegerType()),
    StructField("headers", ArrayType(StructType([StructField("key", StringType()),
                                                 StructField("value", BinaryType())]))),
])  # exactly Spark's built-in kafka source with includeHeaders=true
SINK_SCHEMA = "topic string, key string, value binary"  # what a sink needs; the job adds ORDER_COLUMNS
ORDER_COLUMNS = ("src", "pos", "seq")  # an output record's source order: (partition or file, offset or line, n)
STEP_SCHEMA = "kind string, key string, value binary, src long, pos long, seq long"  # before routing by kind
STATE_SCHEMA = "version int, blob binary"  # one opaque blob per group: cheap to ship, evolves inside
