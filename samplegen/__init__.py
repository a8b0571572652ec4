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

Adding a KRaft-mode sample: a ``samplegen.kafka.quorum`` module would play the
QuorumController's part (fencing after broker.session.timeout.ms, elections by
PartitionChangeBuilder's rules) and emit metadata records through the KRaft
encoder instead of ZooKeeper writes; brokers, templates (a 3.x table beside
``templates28``), writers and scenarios stay as they are.
"""
