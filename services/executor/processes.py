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
