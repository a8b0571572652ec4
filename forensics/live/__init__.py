"""``kafka-forensics watch`` and ``playback``: the answer while the outage is still running (docs/live.md)."""
