"""ZooKeeper's own files (txn logs, snapshots, jute) and znode dumps, read as the events Kafka's znodes stand for."""
