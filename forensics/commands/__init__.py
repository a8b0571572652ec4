"""One module per CLI command; each decorates its function with ``@app.command``."""
