"""Errors the user caused (bad arguments, unusable input): one line, exit code 2, no traceback."""
from __future__ import annotations


class UserError(Exception):
    """A problem with what the user gave us; the message is shown as is."""

    exit_code = 2
