"""Demo and test support, not the service: the throw-away local broker that `rebalance demo` starts and the
tests and benchmarks run. No room of the product but the demo command imports it."""
