"""Broker, controller and client log files: log4j layouts, the message templates of every Kafka version."""
