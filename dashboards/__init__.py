"""Plotly figures built from replay outputs (nothing here parses logs)."""
