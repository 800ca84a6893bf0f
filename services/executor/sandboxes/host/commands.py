"""Running a command: bwrap started with its status pipe and seccomp program, the command's
output read (capped) while it runs, its kill, and HEMRA's own channels that alone say a
command never ran (a SandboxError) rather than failed (its result)."""

import asyncio
import contextlib
import json
import os
import signal
import time
from pathlib import Path

from hemra.services.executor.processes import feed_stdin, kill_group, running, start_time
from hemra.services.executor.sandboxes import seccomp
from hemra.services.executor.sandboxes.base import ExecResult, SandboxError

#: Cap on captured output per command; the rest is dropped (the files stay whole).
MAX_OUTPUT_BYTES = 16 * 1024 * 1024
#: How long a killed command's output may take to close (its whole namespace is dead by then).
_DRAIN_SECS = 10.0


class Commands:
    """The HostSandbox's commands (a mixin: HostSandbox holds the state)."""

    async def exec(self, command, cwd="", env=None, timeout=None, stdin=b"", on_output=None):
        return await self._run(command, cwd, env or {}, timeout, stdin, on_output)

    async def _run(
        self,
        command: str,
        cwd: str,
        env: dict[str, str],
        timeout: float | None,
        stdin: bytes,
        on_output=None,
        relay: bool = True,
        cap: int = MAX_OUTPUT_BYTES,
    ) -> ExecResult:
        relaying = self._relaying(relay)
        with contextlib.ExitStack() as pipes:
            status, status_end = _pipe(pipes)
            started, started_end = _pipe(pipes) if relaying else (None, None)
            program = _pipe_of(pipes, seccomp.program())
            args = [
                *self._bwrap_args(cwd, env, relaying),
                *("--json-status-fd", str(status_end), "--seccomp", str(program)),
                "--",
                *self._command(command, started_end),
            ]
            keep = (status_end, program) if started_end is None else (status_end, program, started_end)
            return await self._start(args, keep, timeout, stdin, on_output, cap, status, started)

    async def _start(self, args, pass_fds, timeout, stdin, on_output, cap, status: int, started: int | None):
        """Run bwrap; a SandboxError only when HEMRA's own channels say the command never ran:
        bwrap reports `{"exit-code": N}` on its status pipe once it ran the command (never when
        its setup failed), the relay's launcher writes `started` before the command runs.
        The agent can write neither: bwrap closes its status pipe and reads the seccomp program
        before the command runs, the launcher closes `started` before it does."""
        begun = time.monotonic()
        try:
            # An empty environment: bwrap's own (PID 1 inside) must not carry HEMRA's secrets.
            process = await asyncio.create_subprocess_exec(
                *args,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                start_new_session=True,
                env={},
                pass_fds=pass_fds,
            )
        except OSError as exc:
            raise SandboxError(f"cannot start bubblewrap: {exc}") from None
        self._processes.add(process)
        timed_out = False
        try:
            out, err = await asyncio.wait_for(_communicate(process, stdin, on_output, cap), timeout)
        except TimeoutError:
            timed_out = True
            kill_command(process)
            try:
                out, err = await asyncio.wait_for(_communicate(process, b"", None, cap), _DRAIN_SECS)
            except TimeoutError:
                raise SandboxError(
                    f"sandbox {self.attempt_id}: a timed-out command's output stayed open after its kill"
                ) from None
        except asyncio.CancelledError:
            kill_command(process)
            raise
        finally:
            self._processes.discard(process)
        code = await process.wait()
        said = err.decode(errors="replace").strip()
        if code > 0 and not timed_out:  # a negative code: bwrap was killed (by HEMRA's kill)
            if not _ran(_available(status)):
                raise SandboxError(f"bubblewrap failed: {said}")
            if started is not None and not _available(started):
                raise SandboxError(said or "the model relay did not start")
        return ExecResult(code, out, err, timed_out, time.monotonic() - begun)


def _pipe(pipes: contextlib.ExitStack) -> tuple[int, int]:
    """A pipe (read end, write end), both closed when `pipes` closes."""
    ends = os.pipe()
    for fd in ends:
        pipes.callback(os.close, fd)
    return ends


def _pipe_of(pipes: contextlib.ExitStack, data: bytes) -> int:
    """The read end of a pipe that holds `data` (at most a pipe's buffer) and then ends."""
    read, write = os.pipe()
    pipes.callback(os.close, read)
    try:
        os.write(write, data)
    finally:
        os.close(write)
    return read


def _available(fd: int) -> bytes:
    """What a pipe holds now, without waiting for more."""
    os.set_blocking(fd, False)
    try:
        return os.read(fd, 65536)
    except BlockingIOError:
        return b""


def _ran(status: bytes) -> bool:
    """Whether bwrap's JSON status says it ran the command (its setup done, its exec made)."""
    for line in status.decode(errors="replace").splitlines():
        with contextlib.suppress(ValueError):
            if "exit-code" in json.loads(line):
                return True
    return False


def kill_command(process: asyncio.subprocess.Process) -> None:
    """SIGKILL a command: bubblewrap's group and, by its own PID, the init of the command's PID
    namespace, whose death takes every process of the namespace with it (even one that left
    the group, and whatever the order in which bubblewrap's parent-death signal lands)."""
    inits = children(process.pid)
    kill_group(process)
    for pid, start in inits:
        if running(pid, start):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)


def children(pid: int) -> list[tuple[int, str]]:
    """(pid, start time) of a process's children: bwrap's, the init of its PID namespace."""
    found = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            for child in Path(f"/proc/{pid}/task/{task}/children").read_text().split():
                start = start_time(int(child))
                if start:
                    found.append((int(child), start))
    except OSError:
        pass
    return found


async def _communicate(
    process: asyncio.subprocess.Process, stdin: bytes, on_output=None, cap: int = MAX_OUTPUT_BYTES
) -> tuple[bytes, bytes]:
    async def read(stream, name: str) -> bytes:
        chunks, size = [], 0
        while chunk := await stream.read(65536):
            if on_output is not None:
                await on_output(name, chunk)
            if size < cap:
                chunks.append(chunk[: cap - size])
            size += len(chunk)
        return b"".join(chunks)

    _, out, err = await asyncio.gather(
        feed_stdin(process, stdin), read(process.stdout, "stdout"), read(process.stderr, "stderr")
    )
    return out, err
