"""ZooKeeper as Kafka sees it: a data tree that hands out zxids, and its txn log on disk."""
