"""`rebalance serve`: the long-running service, events topic -> diffs and dead-letter topics, exactly once.

The exactly-once sink writes each micro-batch's diffs and dead letters in one Kafka transaction, so
`read_committed` consumers see every record once across crashes and restarts (docs/exactly-once.md).
"""

from __future__ import annotations

import argparse
import sys

from streaming.cli.usage import (
    DEFAULT_BATCH,
    check_batch_size,
    check_checkpoint,
    client_options,
    kafka_failure,
    pipeline_config,
    spark_settings,
)


def run(args: argparse.Namespace) -> int:
    config = pipeline_config(args.strategies, args.timing)
    max_events = check_batch_size(args.max_events_per_batch) or DEFAULT_BATCH
    master, spark_conf = spark_settings(args.master, args.spark_conf)
    options = client_options(args.kafka_option, args.bootstrap)
    resume = check_checkpoint(args.checkpoint, "serve")
    from kafka.errors import KafkaError

    from streaming.kafka.topics import ServeTopics, ensure_serve_topics

    topics = ServeTopics(args.events_topic, args.diffs_topic, args.dead_letter_topic, args.conformance_topic)
    try:
        ensure_serve_topics(args.bootstrap, topics, options)
    except (KafkaError, OSError) as exc:
        raise kafka_failure(args.bootstrap, exc) from None
    from streaming.spark.pipelines import serve_events
    from streaming.spark.session import build_spark

    spark = build_spark(app_name="rebalance-serve", master=master, extra_conf=spark_conf)
    print(f"serving {topics.events} -> {topics.diffs}, {topics.dead_letter} on {args.bootstrap} "
          f"(checkpoint {args.checkpoint}{', once' if args.once else ''}; timing {config.timing.text()})",
          file=sys.stderr, flush=True)
    print(resume, file=sys.stderr, flush=True)
    events = serve_events(spark, args.bootstrap, config, checkpoint=args.checkpoint, topics=topics,
                          once=args.once, max_events_per_batch=max_events, kafka_options=options)
    print(f"processed {events} events", file=sys.stderr, flush=True)
    return 0
