"""hemra harness: the harness protocol from a shell, for program harnesses in any language.

A program harness gets HEMRA_HARNESS_ADDRESS and HEMRA_HARNESS_TOKEN in its
environment; these commands use them to act on the attempt's sandbox.
"""

import json
import os
import sys
from pathlib import Path
from typing import Annotated

import typer

from hemra.clients.cli.common import command, fail
from hemra.clients.harness_sdk import HarnessSession

app = typer.Typer(
    help="The harness protocol from a shell, for program harnesses in any language.", no_args_is_help=True
)


def _session() -> HarnessSession:
    address, token = os.environ.get("HEMRA_HARNESS_ADDRESS"), os.environ.get("HEMRA_HARNESS_TOKEN")
    if not address or not token:
        fail("HEMRA_HARNESS_ADDRESS and HEMRA_HARNESS_TOKEN are not set (run this inside a program harness)")
    return HarnessSession(address, token)


@app.command("exec")
def exec_(command_line: Annotated[str, typer.Argument(help="A bash command to run in the sandbox.")]) -> None:
    """Run a command in the sandbox; print its output and exit with its status."""
    code = _exec(command_line)
    raise typer.Exit(code)


@command
async def _exec(command_line: str) -> int:
    async with _session() as session:
        result = await session.run(command_line)
    sys.stdout.buffer.write(result.stdout)
    sys.stderr.buffer.write(result.stderr)
    return 124 if result.timed_out else result.exit_code


@app.command()
def read(path: Annotated[str, typer.Argument(help="A file in the sandbox.")]) -> None:
    """Print a sandbox file."""
    _read(path)


@command
async def _read(path: str) -> None:
    async with _session() as session:
        sys.stdout.buffer.write(await session.read_file(path))


@app.command()
def write(
    path: Annotated[str, typer.Argument(help="A file in the sandbox.")],
    source: Annotated[Path, typer.Argument(help="A local file, or - for standard input.")] = Path("-"),
) -> None:
    """Write a sandbox file from a local file or standard input."""
    _write(path, sys.stdin.buffer.read() if str(source) == "-" else source.read_bytes())


@command
async def _write(path: str, data: bytes) -> None:
    async with _session() as session:
        await session.write_file(path, data)


@app.command()
def event(
    type_: Annotated[str, typer.Argument(metavar="TYPE", help="message, tool_call, usage, ...")],
    payload: Annotated[str, typer.Argument(help="The event's content as a JSON object.")] = "{}",
    name: Annotated[str, typer.Option("--name")] = "",
) -> None:
    """Add an event to the attempt's log."""
    try:
        data = json.loads(payload)
    except ValueError as exc:
        fail(f"payload is not JSON: {exc}")
    if not isinstance(data, dict):
        fail("payload must be a JSON object")
    _event(type_, name, data)


@command
async def _event(type_: str, name: str, data: dict) -> None:
    async with _session() as session:
        await session.emit(type_, name, **data)
