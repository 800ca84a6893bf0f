"""Small helpers for the child processes an executor starts (sandbox commands, program harnesses)."""

import asyncio
import os
import signal


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


def alive(pid: int) -> bool:
    """Whether a process with this ID runs on this host (an executor's, whose leftovers
    must then be kept)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
