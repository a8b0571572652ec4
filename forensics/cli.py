"""The ``kafka-forensics`` command line: a thin shell over the library.

Each command lives in ``forensics/commands/<name>.py`` and registers itself on
``forensics.app.app`` when imported (see ``COMMANDS``). User errors end in one line on
stderr and exit code 2; nothing the user did wrong prints a traceback
(``KAFKA_FORENSICS_DEBUG=1`` shows them for bug reports).
"""
from __future__ import annotations

import os
import sys

import typer

try:  # typer >= 0.20 vendors click; older typer uses the click package
    from typer._click import exceptions as click_exc
except ImportError:  # pragma: no cover
    from click import exceptions as click_exc

from forensics.app import app
from forensics.errors import UserError

# Commands register themselves on import; the order here is the order in --help.
COMMANDS = (
    "forensics.commands.postmortem",
    "forensics.commands.replay",
    "forensics.commands.whatif",
    "forensics.commands.risk",
    "forensics.commands.dashboard",
    "forensics.commands.audit",
    "forensics.commands.capture",
    "forensics.commands.watch",
    "forensics.commands.ingest",
    "forensics.commands.zk_dump",
    "forensics.commands.kraft_dump",
    "forensics.commands.warm_up",
)


def _load_commands() -> None:
    import importlib

    for name in COMMANDS:
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:  # a real import error inside an existing command module
                raise


def main(argv: list[str] | None = None) -> None:
    _load_commands()
    debug = os.environ.get("KAFKA_FORENSICS_DEBUG") == "1"
    try:
        rv = app(args=argv, standalone_mode=False, prog_name="kafka-forensics")
    except UserError as exc:
        print(f"kafka-forensics: error: {exc}", file=sys.stderr)
        sys.exit(exc.exit_code)
    except click_exc.UsageError as exc:
        exc.show()
        sys.exit(2)
    except click_exc.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except (typer.Abort, KeyboardInterrupt):
        print("kafka-forensics: interrupted", file=sys.stderr)
        sys.exit(130)
    except BrokenPipeError:
        sys.exit(0)
    except Exception as exc:  # noqa: BLE001
        if debug:
            raise
        print(
            f"kafka-forensics: internal error: {type(exc).__name__}: {exc}\n"
            "  (this is a bug in kafka-forensics; rerun with KAFKA_FORENSICS_DEBUG=1 for the traceback)",
            file=sys.stderr,
        )
        sys.exit(3)
    sys.exit(rv if isinstance(rv, int) else 0)
