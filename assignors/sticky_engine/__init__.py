"""Kafka's `AbstractStickyAssignor`, the engine under `sticky` and `cooperative-sticky`, one module per part of
Kafka's class:

* `engine`: `assignPartitions` — the pre-pass decides the path, a builder runs, the result in member order
  (`run_engine`, `EngineResult`);
* `inputs`: what the engine reads — the topics and members tables (`GroupTables`) and one round's claims after
  Kafka's pre-pass (owned-partition recovery, generation conflicts: `RoundContext`);
* `constrained`: `ConstrainedAssignmentBuilder` (every member subscribes to the same topics);
* `constrained_bulk`: its steps over numpy arrays, for groups too big for its lists;
* `general`: `GeneralAssignmentBuilder` (subscriptions differ);
* `balance`: `performReassignments` with `isBalanced`, `PartitionMovements` and the balance-score revert rule.
"""
