"""The small files Kafka keeps in a log directory beside the partitions' data: ``meta.properties`` says which
broker (or KRaft node) and which cluster the directory belongs to."""
