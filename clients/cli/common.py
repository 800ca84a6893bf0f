"""What every command shares: the error policy, async entry, and the connection to the services."""

import asyncio
import functools
import math
import os
import sys
from pathlib import Path

import typer
from rich.console import Console
from rich.text import Text

from hemra.clients.cli.safe import clean_logging, plain
from hemra.services.common import errors

# Reports are tables; piped output gets room for them instead of 80 columns.
console = Console(width=None if Console().is_terminal else 120)
err_console = Console(stderr=True)


class RunFileError(ValueError):
    """The run file or the flags are wrong; the message names the file and the key."""


#: Exit statuses: 1 when a run did not finish or a service failed, 2 for bad input.
EXIT_INCOMPLETE, EXIT_USAGE = 1, 2
#: The one table from error class to exit status (the first class the error is an instance of).
EXIT_CODES = {
    errors.StoreUnwritable: EXIT_INCOMPLETE,  # a full disk is no bad input; the run is left incomplete
    errors.NotFound: EXIT_USAGE,
    errors.InvalidArgument: EXIT_USAGE,
    errors.FailedPrecondition: EXIT_USAGE,
    RunFileError: EXIT_USAGE,
    errors.HemraError: EXIT_INCOMPLETE,
}


#: Errors whose message is the whole story, printed as it is; any other says which status it was.
SAID_PLAINLY = (errors.NotFound, errors.InvalidArgument, errors.FailedPrecondition, RunFileError)


def exit_code(exc: Exception) -> int:
    return next(code for kind, code in EXIT_CODES.items() if isinstance(exc, kind))


def home() -> Path:
    from hemra.services.common.settings import hemra_home

    return hemra_home()


def database_url() -> str | None:
    return os.environ.get("HEMRA_DATABASE_URL") or None


def fail(message: str, code: int = EXIT_USAGE) -> None:
    err_console.print(
        Text("error:", style="red").append(" ").append(plain(message, multiline=True)), highlight=False, soft_wrap=True
    )
    raise typer.Exit(code)


#: The highest port a socket takes (gRPC would take a higher one modulo 65536, silently).
MAX_PORT = 65535


def check_address(option: str, value: str, listen: bool = False) -> str:
    """`value` when it is HOST:PORT with a port a socket takes: 1 to 65535, or 0 for a listener
    (any free port; a listener's host may be empty: every interface). Else one line naming
    `option`, and exit 2."""
    host, colon, port = value.rpartition(":")
    least = 0 if listen else 1
    shown = repr(value if len(value) <= 100 else value[:97] + "...")
    if not colon or not (host or listen) or not (port.isascii() and port.isdigit() and len(port) <= 5):
        fail(f"{option} {shown}: expected HOST:PORT")
    if not least <= int(port) <= MAX_PORT:
        fail(f"{option} {shown}: the port must be from {least} to {MAX_PORT}")
    return value


def check_seconds(option: str, value: float) -> float:
    """A number of seconds an option gives: finite and more than 0 (NaN compares false with
    every bound, so it is refused by name). Else one line naming `option`, and exit 2."""
    if not math.isfinite(value) or value <= 0:
        fail(f"{option} must be a number of seconds more than 0 (got {value:g})")
    return value


def command(coroutine_function):
    """Run an async command with one error policy: one line, non-zero exit, traceback with --debug."""

    @functools.wraps(coroutine_function)
    def wrapper(*args, **kwargs):
        clean_logging()
        try:
            return asyncio.run(coroutine_function(*args, **kwargs))
        except tuple(EXIT_CODES) as exc:
            _maybe_traceback()
            code = exit_code(exc)
            fail(str(exc) if isinstance(exc, SAID_PLAINLY) else f"{exc.code.name.lower()}: {exc}", code)

    return wrapper


def _maybe_traceback() -> None:
    if os.environ.get("HEMRA_DEBUG"):
        import traceback

        traceback.print_exc(file=sys.stderr)
