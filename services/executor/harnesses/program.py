"""kind = "program": the user's own command, in any language.

It runs on the executor's host, from the harness file's folder, in its own
process group, with a clean environment: the harness file's named variables,
HEMRA_HARNESS_ADDRESS and HEMRA_HARNESS_TOKEN for the harness protocol (or the
`hemra harness` commands that speak it), the instruction on stdin and in
HEMRA_INSTRUCTION, the limits, and the MCP servers it declares in
HEMRA_MCP_SERVERS (JSON; each checked to start inside the sandbox first).
Each stdout line that is a JSON object with a "type" becomes an event; other
output is kept as output events (a line longer
than MAX_LINE_BYTES is split into output, never parsed). A line meant as an event
that HEMRA cannot take (it starts with "{" and names "type", but is not valid
JSON, or its "type", "name" or "duration" are not what an event holds) is a bad
event line: an "error" event "bad_event_line" keeps it (escaped, cut at
MAX_RAW_BYTES; the first MAX_BAD_MESSAGES of them, then a count), and the lines
after it are read on as ever. Its stdout and stderr
are also kept whole (up to the own-log cap) as the artifacts
/logs/agent/harness-stdout.txt and harness-stderr.txt, stored by HEMRA directly:
never written into the agent's sandbox, where the agent could get in the way.
"""

import asyncio
import json
import os
import shutil
import sys
import time
from pathlib import Path

from hemra.services import envtemplate
from hemra.services.common import mcp
from hemra.services.executor import artifacts
from hemra.services.executor.artifacts import OwnLog
from hemra.services.executor.events import MAX_DURATION_SECS, BadMessages, Lines, event, event_of, output_events
from hemra.services.executor.harnesses import mcp as mcp_servers
from hemra.services.executor.harnesses.base import (
    COMPLETED,
    HARNESS_FAILED,
    TIMED_OUT,
    HarnessDriver,
    HarnessResult,
    TrialContext,
)
from hemra.services.executor.processes import feed_stdin, kill_group, kill_marked
from hemra.services.executor.sandboxes import SandboxError

_OUTPUT_CHUNK = 64 * 1024
#: Longest stdout line read as a possible JSON event; a longer one is split into output.
MAX_LINE_BYTES = 1024 * 1024
#: How long the harness's output may go on once its process exited (or was killed).
DRAIN_SECS = 2.0
#: The end of stderr kept for the error message.
_TAIL_BYTES = 4096
STDOUT_LOG, STDERR_LOG = "/logs/agent/harness-stdout.txt", "/logs/agent/harness-stderr.txt"


class ProgramDriver(HarnessDriver):
    async def mounts(self, harness) -> dict[str, str]:
        return await mcp_servers.mounts(harness)  # its MCP servers may be scripts of its folder

    async def run(self, trial: TrialContext) -> HarnessResult:
        folder = Path(trial.harness.source_path).parent
        if not folder.is_dir():
            raise SandboxError(f"harness {trial.harness.harness_name}: its folder {folder} is gone")
        declared = mcp_servers.servers(trial.harness)
        # Its MCP servers are for it to start inside the sandbox; HEMRA checks they can, first.
        await mcp_servers.check_started(trial, declared, envtemplate.pass_through(trial.harness.env))
        started = time.monotonic()
        try:
            process = await asyncio.create_subprocess_exec(
                *_with_parent_death(list(trial.harness.command)),
                cwd=folder,
                env=_environment(trial),
                start_new_session=True,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
            )
        except OSError as exc:
            await trial.events.emit(event("error", "start", message=str(exc)))
            return HarnessResult(HARNESS_FAILED, -1, f"cannot start {trial.harness.command[0]}: {exc}")
        await trial.events.emit(event("status", "start", command=list(trial.harness.command), pid=process.pid))
        stdout, stderr = OwnLog(STDOUT_LOG), _Tailed(STDERR_LOG)
        try:
            try:
                code, timed_out = await _until_exit(process, trial, stdout, stderr)
            finally:
                kill_group(process)  # anything it left running in its group
                kill_marked(f"HEMRA_HARNESS_TOKEN={trial.harness_token}")  # and in sessions of their own
            await trial.events.emit_own(
                event("status", "exit", time.monotonic() - started, exit_code=code, timed_out=timed_out)
            )
            await artifacts.keep(trial.events, stdout)
            await artifacts.keep(trial.events, stderr)
        finally:
            stdout.close()
            stderr.close()
        if timed_out:
            return HarnessResult(TIMED_OUT, -1, f"the harness timed out after {trial.timeout:g} s")
        if code != 0:
            return HarnessResult(HARNESS_FAILED, code, f"the harness exited {code}: {_tail(stderr.tail)}")
        return HarnessResult(COMPLETED, 0)


def _environment(trial: TrialContext) -> dict[str, str]:
    declared = mcp_servers.servers(trial.harness)
    venv_bin = str(Path(sys.executable).parent)
    return {
        "PATH": venv_bin + os.pathsep + os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": os.environ.get("HOME", "/root"),
        "LANG": os.environ.get("LANG", "C.UTF-8"),
        **envtemplate.pass_through(trial.harness.env),
        "HEMRA_HARNESS_ADDRESS": trial.harness_address,
        "HEMRA_HARNESS_TOKEN": trial.harness_token,
        "HEMRA_ATTEMPT_ID": trial.attempt_id,
        "HEMRA_INSTRUCTION": trial.task.instruction,
        "HEMRA_TASK_NAME": trial.task.task_name,
        "HEMRA_MODEL": trial.model,
        "HEMRA_TIMEOUT_SECS": f"{trial.timeout:g}",
        "HEMRA_WORKDIR": trial.task.environment.workdir,
        **({mcp.PROGRAM_VARIABLE: json.dumps(mcp.program_declaration(declared))} if declared else {}),
    }


class _Tailed(OwnLog):
    """An OwnLog that also remembers its last _TAIL_BYTES."""

    def __init__(self, path: str):
        super().__init__(path)
        self.tail = bytearray()

    def write(self, data: bytes) -> None:
        super().write(data)
        self.tail += data[-_TAIL_BYTES:]
        del self.tail[:-_TAIL_BYTES]


async def _until_exit(process, trial: TrialContext, stdout: OwnLog, stderr: OwnLog) -> tuple[int, bool]:
    """(exit status, timed out). The harness is over when its own process exits, whatever it
    left holding its output open (its output gets DRAIN_SECS more), or at its timeout (wall
    clock, final)."""
    pump = asyncio.ensure_future(_pump(process, trial, stdout, stderr))
    exited = asyncio.ensure_future(_exit_status(process))
    try:
        done, _ = await asyncio.wait({exited}, timeout=trial.timeout)
        if not done:
            kill_group(process)
        await asyncio.wait({pump}, timeout=DRAIN_SECS)
        return await exited, not done
    finally:
        for task in (pump, exited):
            task.cancel()
        await asyncio.gather(pump, exited, return_exceptions=True)


async def _exit_status(process) -> int:
    """The process's exit status as soon as it exits. (asyncio's `wait` also waits until its
    pipes close, which a child holding them open would put off.)"""
    while process.returncode is None:
        await asyncio.sleep(0.05)
    return process.returncode


async def _pump(process, trial: TrialContext, stdout: OwnLog, stderr: OwnLog) -> None:
    # A coroutine around the gather, so that cancelling it also collects the
    # readers' cancellation instead of leaving it unretrieved.
    await asyncio.gather(
        feed_stdin(process, trial.task.instruction.encode()),
        _read_events(process.stdout, stdout, trial),
        _read_output(process.stderr, stderr, trial),
    )


async def _read_events(stream, keep: OwnLog, trial: TrialContext) -> None:
    """JSON lines with a "type" are events; the rest is output. Read in chunks, never by
    readline: a line has no length limit but MAX_LINE_BYTES of it is all memory holds."""
    pending, lines, bad = bytearray(), Lines(MAX_LINE_BYTES), BadMessages(trial.events, "bad_event_line")

    async def flush_output() -> None:
        if pending:
            await trial.events.emit(*output_events("stdout", bytes(pending)))
            pending.clear()

    async def take(found) -> None:
        for line, whole in found:
            parsed = _as_event(line) if whole else None
            if parsed is None:
                pending.extend(line)
                if len(pending) >= _OUTPUT_CHUNK:
                    await flush_output()
                continue
            await flush_output()
            if isinstance(parsed, BadLine):
                await bad.add(str(parsed), line.rstrip(b"\r\n"))
            else:
                await trial.events.emit(parsed)

    while chunk := await stream.read(_OUTPUT_CHUNK):
        keep.write(chunk)
        await take(lines.feed(chunk))
    await take(lines.close())
    await flush_output()
    await bad.close()


async def _read_output(stream, keep: OwnLog, trial: TrialContext) -> None:
    while chunk := await stream.read(_OUTPUT_CHUNK):
        keep.write(chunk)
        await trial.events.emit(*output_events("stderr", chunk))


class BadLine(str):
    """What is wrong with a line meant as an event."""


def _as_event(line: bytes):
    """The event a line holds; None when the line is output (not meant as an event); a BadLine
    when it is meant as one (it starts with "{" and names "type") but cannot be taken."""
    stripped = line.strip()
    if not stripped.startswith(b"{"):
        return None
    try:
        data = json.loads(stripped)
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
        if b'"type"' not in stripped:
            return None
        return BadLine(f"not valid JSON: {_reason(exc)}")
    if not isinstance(data, dict) or "type" not in data:
        return None
    type_, name, duration = data.pop("type"), data.pop("name", ""), data.pop("duration", 0)
    if not isinstance(type_, str) or not type_:
        return BadLine(f'"type" must be a non-empty string, not {_json_type(type_)}')
    if not isinstance(name, str | None):
        return BadLine(f'"name" must be a string, not {_json_type(name)}')
    if duration is None:
        duration = 0
    if isinstance(duration, bool) or not isinstance(duration, int | float) or not 0 <= duration <= MAX_DURATION_SECS:
        return BadLine(f'"duration" must be a number of seconds from 0 to {MAX_DURATION_SECS:g}, not {duration!r:.100}')
    try:
        return event_of(type_, name or "", float(duration), data)
    except (ValueError, TypeError, OverflowError, RecursionError) as exc:
        return BadLine(f"cannot be kept as an event: {_reason(exc)}")


def _json_type(value) -> str:
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean", type(None): "null"}
    return names.get(type(value), "a number")


def _reason(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"[:200]


def _with_parent_death(command: list[str]) -> list[str]:
    """Have the harness SIGKILLed if the executor dies, even by kill -9, via util-linux's
    setpriv. (A preexec_fn would do it in-process, but running Python between fork and
    exec in a process with gRPC and database threads can crash the child.)"""
    setpriv = shutil.which("setpriv")
    return [setpriv, "--pdeathsig", "KILL", "--", *command] if setpriv else command


def _tail(data: bytes | bytearray, limit: int = 200) -> str:
    lines = bytes(data).decode(errors="replace").strip().splitlines()
    return (lines[-1] if lines else "")[:limit]
