"""Postmortem reports: ``build`` makes the document, ``render`` turns it into text, Markdown or HTML."""
