"""Kafka client adapters: client options, topic creation, read_committed reading, retries across a broker
restart, transactional batches, staging, the loader."""
