"""One cluster's replay split by partition shards, its cluster-wide phase 1, and the merge."""
