"""Re-running Kafka's controller over a trace: pure decisions, a replay loop, explanations.

Nothing in this package imports Spark or touches files; ``forensics`` feeds it.
"""
