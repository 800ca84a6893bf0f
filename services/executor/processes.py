"""Small helpers for the child processes an executor starts (sandbox commands, program harnesses)."""

import asyncio
import os
import signal
from pathlib import Path


async def feed_stdin(process: asyncio.subprocess.Process, data: bytes) -> None:
    """Write `data` to the child's stdin and close it; a child that stops reading is not an error."""
    if process.stdin is None:
        return
    try:
        if data:
            process.stdin.write(data)
            await process.stdin.drain()
    except (BrokenPipeError, ConnectionResetError):
        pass
    finally:
        process.stdin.close()


def kill_group(process: asyncio.subprocess.Process) -> None:
    """SIGKILL the child's process group (it was started in a session of its own)."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def kill_marked(marker: str) -> int:
    """SIGKILL every process of this host whose environment holds `marker` ("NAME=value"), as
    children that started sessions of their own (out of their group's reach) still do, stopping
    each first so that none forks away between the scan and the kill. Returns how many."""
    wanted, found = marker.encode(), []
    for _ in range(8):
        round_ = []
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit() or int(entry.name) == os.getpid():
                continue
            try:
                with open(f"/proc/{entry.name}/environ", "rb") as environ:
                    if wanted not in environ.read().split(b"\0"):
                        continue
                os.kill(int(entry.name), signal.SIGSTOP)
                round_.append(int(entry.name))
            except (OSError, ValueError):  # gone, or not ours to read
                continue
        if not round_:
            break
        for pid in round_:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        found += round_
    return len(set(found))


def alive(pid: int, started: str = "") -> bool:
    """Whether a process with this ID runs on this host (an executor's, whose leftovers
    must then be kept). With `started` (its start_time), only that very process: a restarted
    container numbers its processes afresh, and another one may have the ID by then."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    if started:
        now = start_time(pid)
        return now == started or not now  # unreadable: it cannot be told apart, so kept
    return True


def stat_fields(pid: int) -> list[str]:
    """/proc/PID/stat's fields after the command's name (from the state on), [] when gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return []
    return text.rsplit(")", 1)[-1].split()


def start_time(pid: int) -> str:
    """When the process started (clock ticks since boot), "" when it is gone: with its ID, it
    names one process for good, where the ID alone is reused."""
    fields = stat_fields(pid)
    return fields[19] if len(fields) > 19 else ""


def running(pid: int, start: str) -> bool:
    """Whether this very process (not a later one with its number) still runs: a zombie
    init has already seen every process of its namespace killed and reaped."""
    fields = stat_fields(pid)
    return len(fields) > 19 and fields[19] == start and fields[0] not in ("Z", "X")
