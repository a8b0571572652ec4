"""``audit``: months of logs from many clusters, on Spark, incrementally.

- ``layout``: which files belong to which cluster and day under the audit root.
- ``manifest``: what an earlier run already processed (path, size, mtime, head checksum).
- ``store``: the Parquet tables under ``DIR/tables/``, partitioned by cluster and date,
  rewritten one (cluster, date) directory at a time with stable file names.
- ``distributed``: the controller replay on executors, one task per partition shard.
- ``tables``: replay results as rows of the audit tables.
- ``summary``: ``audit_summary.json`` and the figures of ``audit.html``.
- ``run``: the whole job, as the ``audit`` command runs it.
"""
