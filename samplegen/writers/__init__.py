"""Files as a cluster leaves them: log4j logs with hourly rotation, client logs, zkCli transcripts."""
