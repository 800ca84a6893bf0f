"""A command's output, streamed out of the engine."""

import asyncio
import threading

from hemra.services.executor.sandboxes.base import SandboxError

#: Cap on captured output per command; the rest is dropped (the files stay whole).
MAX_OUTPUT_BYTES = 16 * 1024 * 1024


class Stream:
    """A command's output, read by a thread of its own and handed to the event loop as it comes."""

    def __init__(self, on_output):
        self.on_output = on_output
        #: Set when nobody reads any more: the reading thread stops at its next chunk.
        self.closed = False
        self.chunks = {"stdout": [], "stderr": []}
        self.sizes = {"stdout": 0, "stderr": 0}

    def start(self, open_stream) -> asyncio.Future:
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue = asyncio.Queue()

        def post(item) -> None:
            try:
                loop.call_soon_threadsafe(queue.put_nowait, item)
            except RuntimeError:  # the loop is closed: nobody waits for this command any more
                pass

        def pump():
            try:
                for out, err in open_stream():
                    if self.closed:
                        return
                    for name, chunk in (("stdout", out), ("stderr", err)):
                        if chunk:
                            post((name, chunk))
                post(None)
            except Exception as exc:  # the engine went away mid-command
                post(exc)

        threading.Thread(target=pump, daemon=True, name="hemra-docker-exec").start()
        return asyncio.ensure_future(self._drain(queue))

    async def _drain(self, queue: asyncio.Queue) -> None:
        while (item := await queue.get()) is not None:
            if isinstance(item, Exception):
                raise SandboxError(f"lost the command's output stream: {item}")
            name, chunk = item
            if self.on_output is not None:
                await self.on_output(name, chunk)
            if self.sizes[name] < MAX_OUTPUT_BYTES:
                self.chunks[name].append(chunk[: MAX_OUTPUT_BYTES - self.sizes[name]])
            self.sizes[name] += len(chunk)

    def close(self) -> None:
        self.closed = True

    def data(self, name: str) -> bytes:
        return b"".join(self.chunks[name])
