"""The ZooKeeper-mode controller re-run over facts: its context, its parts (Kafka's handlers), its records followed and judged."""
