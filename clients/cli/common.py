"""What every command shares: the error policy, async entry, and the connection to the services."""

import asyncio
import functools
import os
import sys
from pathlib import Path

import typer
from rich.console import Console
from rich.text import Text

from clients import rpc as clients
from clients.cli.runfile import RunFileError
from clients.cli.safe import clean_logging, plain

# Reports are tables; piped output gets room for them instead of 80 columns.
console = Console(width=None if Console().is_terminal else 120)
err_console = Console(stderr=True)

#: Exit statuses: 1 when a run did not finish or a service failed, 2 for bad input.
EXIT_INCOMPLETE, EXIT_USAGE = 1, 2
_BAD_INPUT = (clients.NotFound, clients.InvalidArgument, clients.FailedPrecondition, RunFileError)


def home() -> Path:
    from services.store.settings import hemra_home

    return hemra_home()


def database_url() -> str | None:
    return os.environ.get("HEMRA_DATABASE_URL") or None


def fail(message: str, code: int = EXIT_USAGE) -> None:
    err_console.print(Text("error:", style="red").append(" ").append(plain(message, multiline=True)),
                      highlight=False, soft_wrap=True)
    raise typer.Exit(code)


def command(coroutine_function):
    """Run an async command with one error policy: one line, non-zero exit, traceback with --debug."""

    @functools.wraps(coroutine_function)
    def wrapper(*args, **kwargs):
        clean_logging()
        try:
            return asyncio.run(coroutine_function(*args, **kwargs))
        except _BAD_INPUT as exc:
            _maybe_traceback()
            fail(str(exc), EXIT_USAGE)
        except clients.RpcError as exc:
            _maybe_traceback()
            fail(f"{exc.code.name.lower()}: {exc}", EXIT_INCOMPLETE)

    return wrapper


def _maybe_traceback() -> None:
    if os.environ.get("HEMRA_DEBUG"):
        import traceback

        traceback.print_exc(file=sys.stderr)
