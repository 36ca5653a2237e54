"""The `rebalance` command line: argument checks and one module per command, each with its `run(args)`."""
