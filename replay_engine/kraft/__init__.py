"""The KRaft quorum controller re-run over the metadata log and KRaft log lines: its parts, PartitionChangeBuilder, its what-if side."""
