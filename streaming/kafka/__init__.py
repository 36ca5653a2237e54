"""Kafka client plumbing: client options, topic creation, read_committed reading, the loader, the local broker."""
