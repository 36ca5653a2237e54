"""The pure core: events, the per-group state machine, diffs, the state codec, config and limits, the plain loop.

Nothing here imports pyspark, kafka or the command line, so it runs and is tested as plain Python."""
