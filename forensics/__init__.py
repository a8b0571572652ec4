"""kafka-forensics: trace-replay and failure forensics for Apache Kafka."""

__version__ = "0.1.0"
