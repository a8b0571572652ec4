"""A small Kafka (ZooKeeper-mode) cluster simulator that writes what a real cluster leaves behind.

Layers, each knowing nothing of the ones above it:

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
"""
