"""An attempt's event log on its way to the store: buffered, sent in batches."""

import asyncio
import json
import time

from hemra.v1 import common_pb2 as pb
from hemra.v1 import store_service_pb2 as spb

#: Flush when this many events are waiting, or after FLUSH_SECS.
FLUSH_EVENTS = 200
FLUSH_SECS = 0.5
#: Longest text kept inline in an event payload; the whole text is in the artifacts.
MAX_TEXT = 256 * 1024


def event(type_: str, name: str = "", duration: float = 0.0, when: float | None = None, **payload) -> pb.Event:
    message = pb.Event(type=type_, name=name, payload_json=json.dumps(payload, ensure_ascii=False, default=str))
    message.time.FromNanoseconds(int((when if when is not None else time.time()) * 1e9))
    message.duration.FromNanoseconds(int(duration * 1e9))
    return message


def text(data: bytes) -> str:
    decoded = data.decode("utf-8", errors="replace")
    return decoded if len(decoded) <= MAX_TEXT else decoded[:MAX_TEXT] + f"\n[... {len(decoded) - MAX_TEXT} more characters]"


class EventLog:
    def __init__(self, store, job_id: str, lease_token: int):
        self.store = store
        self.job_id = job_id
        self.lease_token = lease_token
        self._pending: list[pb.Event] = []
        self._last_flush = time.monotonic()
        self._lock = asyncio.Lock()

    async def emit(self, *events: pb.Event) -> None:
        self._pending.extend(events)
        if len(self._pending) >= FLUSH_EVENTS or time.monotonic() - self._last_flush > FLUSH_SECS:
            await self.flush()

    async def flush(self) -> None:
        async with self._lock:
            if not self._pending:
                return
            batch, self._pending = self._pending, []
            self._last_flush = time.monotonic()
            await self.store.AppendEvents(spb.AppendEventsRequest(
                job_id=self.job_id, lease_token=self.lease_token, events=batch))
