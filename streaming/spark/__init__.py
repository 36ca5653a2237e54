"""Spark adapters: the job around the core's state machine, and the Python data sources and sinks it uses."""
