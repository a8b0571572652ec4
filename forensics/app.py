"""The ``kafka-forensics`` application that every command registers on.

It lives apart from :mod:`forensics.cli`, which imports the commands and runs the application:
a command that needs ``app`` then never imports the module that imports it.
"""
from __future__ import annotations

import typer

from forensics import __version__

app = typer.Typer(
    name="kafka-forensics",
    help="Why did my Kafka partitions have no leader? Replay the controller over the logs and ZooKeeper/KRaft "
    "traces a cluster left behind, and get the answer with its evidence.",
    add_completion=False,
    no_args_is_help=True,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        print(f"kafka-forensics {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version."),
) -> None:
    pass
