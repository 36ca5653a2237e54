"""`rebalance exporter`: diff and conformance records as Prometheus metrics (the fold: streaming/exporter/fold.py)."""
