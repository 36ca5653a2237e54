"""Kafka's `AbstractStickyAssignor`, the engine under `sticky` and `cooperative-sticky`, one module per part of
Kafka's class:

* `engine`: `assignPartitions` — the pre-pass decides the path, a builder runs, the result in member order
  (`run_engine`, `EngineResult`);
* `inputs`: what the engine reads — the topics and members tables (`GroupTables`) and one round's claims after
  Kafka's pre-pass (owned-partition recovery, generation conflicts: `RoundContext`);
* `constrained`: `ConstrainedAssignmentBuilder` (every member subscribes to the same topics), the specification
  over Python lists;
* `constrained_bulk`: its steps over numpy arrays, for groups too big for its lists;
* `general`: `GeneralAssignmentBuilder` (subscriptions differ), the specification over Python lists; its one
  mirror is the C kernel `assignors/reassign_kernel.pyx`, which runs it where built (no rack logic);
* `balance`: the general builder's `performReassignments` with `isBalanced`, `PartitionMovements` and
  `getBalanceScore`.

Each algorithm has one specification and at most one faster representation of it, which `engine.run_engine`
selects; the tests run both side by side.
"""
