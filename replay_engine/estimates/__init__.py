"""Over a finished replay: what-if, pre-mortem (risk), replica assignment, crash time, data loss, clock skew."""
