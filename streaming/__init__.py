"""The streaming service, one room per job: `core` (the pure per-group state machine), `spark` (the job and
its data sources and sinks), `kafka` (client plumbing, the loader, the local broker), `cli` (the commands).
Dependencies point one way: cli -> spark, kafka -> core -> assignors."""

import assignors.compiled  # noqa: F401 - first: its guard keeps stale compiled modules from loading
