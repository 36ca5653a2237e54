"""The streaming service: Kafka (or JSONL) events -> per-group state -> assignment diffs -> sink."""
