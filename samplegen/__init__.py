"""A small Kafka (ZooKeeper-mode) cluster simulator that writes what a real cluster leaves behind.

Layers (ZooKeeper knows nothing of Kafka; the simulation knows files only through ``writers``):

- ``samplegen.zk``: a ZooKeeper server model (data tree, sessions, zxids, the
  3.6+ tree digest) and the binary txn-log writer (jute encoding).
- ``samplegen.kafka``: the cluster: brokers, controller, replica assignment,
  partition and replica state machines, and the log lines they print
  (``templates28``: the message templates of Kafka 2.8.0, ZooKeeper mode).
- ``samplegen.writers``: files: log4j layout with hourly rotation and gzip,
  client logs, zkCli transcripts.
- ``samplegen.scenarios``: the bundled incidents as short declarative scripts;
  ``samplegen.samples`` writes them (``python -m samplegen samples``).
- ``samplegen.corpus``: large synthetic corpora for benchmarks and the audit tree.

KRaft mode (Kafka 3.9): ``samplegen.kafka.quorum`` plays the QuorumController (fencing
after broker.session.timeout.ms, elections by PartitionChangeBuilder's rules, the periodic
rebalance) and writes ``__cluster_metadata`` through the KRaft encoder
(``samplegen.kafka.metadata_log``); ``samplegen.kafka.kraft_broker`` is the broker side,
``kraft_cluster`` the clock and traffic, ``templates39`` the 3.9 log lines.
``samplegen.kraft_scenarios`` / ``samplegen.kraft_samples`` hold and write the KRaft incidents,
kept apart from ``SCENARIOS`` (whose tests read ZooKeeper files); ``python -m samplegen samples``
writes both.
"""
