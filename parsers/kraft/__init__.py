"""KRaft's ``__cluster_metadata`` log: Kafka record batches, metadata record schemas, and the events they stand for."""
