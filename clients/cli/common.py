"""What every command shares: the error policy, async entry, and the connection to the services."""

import asyncio
import functools
import os
import sys
from pathlib import Path

import typer
from rich.console import Console
from rich.text import Text

from clients.cli.safe import clean_logging, plain
from services.common import errors

# Reports are tables; piped output gets room for them instead of 80 columns.
console = Console(width=None if Console().is_terminal else 120)
err_console = Console(stderr=True)


class RunFileError(ValueError):
    """The run file or the flags are wrong; the message names the file and the key."""


#: Exit statuses: 1 when a run did not finish or a service failed, 2 for bad input.
EXIT_INCOMPLETE, EXIT_USAGE = 1, 2
#: The one table from error class to exit status (the first class the error is an instance of).
EXIT_CODES = {
    errors.NotFound: EXIT_USAGE,
    errors.InvalidArgument: EXIT_USAGE,
    errors.FailedPrecondition: EXIT_USAGE,
    RunFileError: EXIT_USAGE,
    errors.HemraError: EXIT_INCOMPLETE,
}


def exit_code(exc: Exception) -> int:
    return next(code for kind, code in EXIT_CODES.items() if isinstance(exc, kind))


def home() -> Path:
    from services.common.settings import hemra_home

    return hemra_home()


def database_url() -> str | None:
    return os.environ.get("HEMRA_DATABASE_URL") or None


def fail(message: str, code: int = EXIT_USAGE) -> None:
    err_console.print(
        Text("error:", style="red").append(" ").append(plain(message, multiline=True)), highlight=False, soft_wrap=True
    )
    raise typer.Exit(code)


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
            # Bad input names its problem; a service's failure says which status it was.
            fail(str(exc) if code == EXIT_USAGE else f"{exc.code.name.lower()}: {exc}", code)

    return wrapper


def _maybe_traceback() -> None:
    if os.environ.get("HEMRA_DEBUG"):
        import traceback

        traceback.print_exc(file=sys.stderr)
