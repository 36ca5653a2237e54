"""The streaming service, one room per job: `core` (the pure per-group state machine), `spark` (the job and
its data sources and sinks), `kafka` (client adapters, the loader), `capture` (a cluster's rebalances as
events), `exporter` (Prometheus metrics), `cli` (the commands), and `demo` (the local broker of the demo and the
tests). Dependencies point one way: cli -> spark, capture, exporter -> kafka -> core -> assignors. `build`
chooses, for a program, between the compiled build and the sources."""
