"""The Kafka side of the simulator: brokers, the controller, and the log lines they print."""
