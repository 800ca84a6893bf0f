"""An attempt's event log on its way to the store: buffered, sent in batches, and bounded.

Most events say what the agent did, and the agent controls their number and size (its
output, its JSON lines, the events it emits through the harness protocol). So the log
keeps at most MAX_EVENT_BYTES of payloads per attempt; past that, events are dropped and
counted, a marker event says where, and a last one (at flush) how much was dropped. The
harness keeps running. HEMRA's own short status and error events past the cap still get
a small reserve, and `emit_own` (HEMRA's code only) is never capped.
"""

import asyncio
import codecs
import json
import os
import time

from hemra.services.domain.vocabulary import USAGE_OBSERVED
from hemra.v1 import common_pb2 as pb
from hemra.v1 import store_service_pb2 as spb

#: Flush when this many events (or bytes of payload) are waiting, or after FLUSH_SECS.
FLUSH_EVENTS = 200
FLUSH_BYTES = 4 * 1024 * 1024
FLUSH_SECS = 0.5
#: Longest text kept inline in an event payload; the whole text is in the artifacts.
MAX_TEXT = 256 * 1024
#: Total payload bytes an attempt's events keep (every type: output, messages, tool calls,
#: events emitted through the protocol). $HEMRA_MAX_EVENT_BYTES lowers or raises it.
MAX_EVENT_BYTES = 16 * 1024 * 1024
#: Largest payload one event keeps; a bigger one keeps its first MAX_TEXT bytes (marked).
MAX_EVENT_PAYLOAD = 1024 * 1024
#: Past the cap, status and error events up to SMALL_EVENT_BYTES are still kept, this many
#: bytes of them (HEMRA's own: harness_end, scored, ...).
RESERVE_BYTES = 256 * 1024
SMALL_EVENT_BYTES = 4 * 1024
#: Longest event type or name kept.
MAX_NAME = 256
#: Slices of output text per event when long output is split.
OUTPUT_SLICE = 64 * 1024


#: The most of a malformed line or message from the agent kept in its error event, and how many
#: such events an attempt's stream keeps (the rest are counted).
MAX_RAW_BYTES = 4 * 1024
MAX_BAD_MESSAGES = 100
#: The longest duration an event may carry (a year): protobuf's own limit is 10,000 years, and
#: the store's readers need none beyond it.
MAX_DURATION_SECS = 365 * 24 * 3600.0
#: Event times from 1970 to the start of 9999 (protobuf's Timestamp ends with 9999).
MAX_TIME_SECS = 253370764800.0


def event(type_: str, name: str = "", duration: float = 0.0, when: float | None = None, **payload) -> pb.Event:
    return event_of(type_, name, duration, payload, when)


def event_of(type_: str, name: str, duration: float, payload: dict, when: float | None = None) -> pb.Event:
    """An event whose payload is a dict (any keys, "when" and "duration" included). Text that is
    not valid UTF-8 (lone surrogates, from surrogate-escaped names or JSON's \\ud800) is kept
    with those characters written out as text (the six characters \\udcff), never refused:
    its payload's JSON never decodes to a lone surrogate, which no reader could print."""
    payload_json = json.dumps(payload, ensure_ascii=False, default=str)
    try:
        payload_json.encode()
    except UnicodeEncodeError:  # only ever inside JSON strings: "\\\\udcff" reads back as text
        payload_json = payload_json.encode("utf-8", "hemra-surrogates-as-text").decode()
    message = pb.Event(type=_utf8(str(type_)), name=_utf8(str(name)), payload_json=payload_json)
    message.time.FromNanoseconds(int((when if when is not None else time.time()) * 1e9))
    message.duration.FromNanoseconds(int(duration * 1e9))
    return message


def _surrogates_as_text(error: UnicodeEncodeError) -> tuple[str, int]:
    return "".join(f"\\\\u{ord(c):04x}" for c in error.object[error.start : error.end]), error.end


codecs.register_error("hemra-surrogates-as-text", _surrogates_as_text)


def _utf8(text: str) -> str:
    """`text`, its lone surrogates (text that cannot be UTF-8) written as \\udXXX escapes."""
    try:
        text.encode()
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode()


def escaped(raw: bytes | str, limit: int = MAX_RAW_BYTES) -> str:
    """Raw bytes (or a surrogate-escaped str, as os.listdir and tarfile give names that are not
    UTF-8) as text, cut at `limit` bytes: valid UTF-8 stays as it is, every other byte becomes
    a \\xNN escape (Python's backslashreplace): b"bad\\xff" is "bad\\\\xff"."""
    raw = _as_bytes(raw)
    cut = raw[:limit]
    return cut.decode("utf-8", "backslashreplace") + (
        f"[... {len(raw) - limit} more bytes]" if len(raw) > limit else ""
    )


def _as_bytes(raw: bytes | str) -> bytes:
    if isinstance(raw, bytes):
        return raw
    try:
        return raw.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a surrogate no undecodable byte gives (JSON's \\ud800)
        return raw.encode("utf-8", "backslashreplace")


def escaped_name(name: str) -> str:
    """A file name as it can be stored: unchanged when it is valid UTF-8, else with each byte
    that is not escaped as \\xNN (see `escaped`), never cut."""
    try:
        name.encode()
        return name
    except UnicodeEncodeError:
        return escaped(name, limit=len(name) * 4)


class BadMessages:
    """Malformed lines or messages an agent sent on one of its streams, recorded as "error"
    events named `name`: each with what is wrong (`message`) and the raw text (`raw`, escaped
    and cut at MAX_RAW_BYTES; `raw_bytes` its whole size). The first MAX_BAD_MESSAGES of them
    are kept; `close` adds a count of all when there were more. They are the agent's doing:
    the stream goes on, and the attempt is scored."""

    def __init__(self, events: "EventLog", name: str):
        self.events = events
        self.name = name
        self.count = 0

    async def add(self, problem: str, raw: bytes | str = b"", **extra) -> None:
        self.count += 1
        if self.count > MAX_BAD_MESSAGES:
            if self.count == MAX_BAD_MESSAGES + 1:
                await self.events.emit_own(
                    event(
                        "status",
                        f"{self.name}_truncated",
                        kept=MAX_BAD_MESSAGES,
                        message=f"more than {MAX_BAD_MESSAGES} malformed messages: later ones are only counted",
                    )
                )
            return
        size = len(_as_bytes(raw))
        await self.events.emit(
            event("error", self.name, message=problem, raw=escaped(raw), raw_bytes=size, number=self.count, **extra)
        )

    async def close(self) -> None:
        if self.count > MAX_BAD_MESSAGES:
            await self.events.emit_own(
                event(
                    "status",
                    f"{self.name}_count",
                    count=self.count,
                    kept=MAX_BAD_MESSAGES,
                    message=f"{self.count} malformed messages; the first {MAX_BAD_MESSAGES} are kept as events",
                )
            )


def text(data: bytes) -> str:
    decoded = data.decode("utf-8", errors="replace")
    return (
        decoded
        if len(decoded) <= MAX_TEXT
        else decoded[:MAX_TEXT] + f"\n[... {len(decoded) - MAX_TEXT} more characters]"
    )


def output_events(name: str, data: bytes, **extra) -> list[pb.Event]:
    """Output events for `data`, split into OUTPUT_SLICE pieces (at UTF-8 boundaries): long
    output is split, never cut."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    events = []
    for start in range(0, len(data), OUTPUT_SLICE):
        piece = decoder.decode(data[start : start + OUTPUT_SLICE], final=start + OUTPUT_SLICE >= len(data))
        if piece:
            events.append(event("output", name, text=piece, **extra))
    return events


def max_event_bytes() -> int:
    configured = os.environ.get("HEMRA_MAX_EVENT_BYTES", "")
    return int(configured) if configured.isdigit() else MAX_EVENT_BYTES


class Lines:
    """Bytes split into lines, none longer than `limit`: a longer line comes out in pieces
    of `limit` bytes marked not whole (to be kept as output, never parsed), so whatever the
    agent prints, memory holds at most one line."""

    def __init__(self, limit: int):
        self.limit = limit
        self._partial = bytearray()
        self._long = False  # the partial line already had pieces split off

    def feed(self, chunk: bytes) -> list[tuple[bytes, bool]]:
        """(line, whole) for each line (with its newline) or piece `chunk` completes."""
        out, start = [], 0
        while (newline := chunk.find(b"\n", start)) >= 0:
            self._partial += chunk[start : newline + 1]
            start = newline + 1
            self._split(out)
            out.append((bytes(self._partial), not self._long))
            self._partial.clear()
            self._long = False
        self._partial += chunk[start:]
        self._split(out)
        return out

    def close(self) -> list[tuple[bytes, bool]]:
        """The last line, without its newline."""
        rest, whole = bytes(self._partial), not self._long
        self._partial.clear()
        self._long = False
        return [(rest, whole)] if rest else []

    def _split(self, out: list) -> None:
        while len(self._partial) > self.limit:
            cut = self.limit
            while cut > self.limit - 3 and 0x80 <= self._partial[cut] < 0xC0:  # not inside a character
                cut -= 1
            out.append((bytes(self._partial[:cut]), False))
            del self._partial[:cut]
            self._long = True


class EventLog:
    def __init__(self, store, job_id: str, lease_token: int, retry_for: float = 0.0):
        self.store = store
        self.job_id = job_id
        self.lease_token = lease_token
        #: How long a batch is retried while the store is unavailable (the lease: past it the
        #: store takes the job back anyway). Batches carry first_seq, so a retry never doubles one.
        self.retry_for = retry_for
        self._appended = 0
        #: Artifacts HEMRA stored itself (the harness's own output), added to the sandbox's.
        self.artifacts: list[pb.Artifact] = []
        self.max_bytes = max_event_bytes()
        self._pending: list[pb.Event] = []
        self._pending_bytes = 0
        self._kept = 0
        self._reserve = 0
        self._dropped_bytes = 0
        self._dropped_events = 0
        self._reported = 0
        self._last_flush = time.monotonic()
        self._lock = asyncio.Lock()

    async def emit(self, *events: pb.Event) -> None:
        """Events from anywhere, the agent's included: bounded (see the module's docstring)."""
        for message in events:
            self._admit(message)
        await self._maybe_flush()

    async def emit_own(self, *events: pb.Event) -> None:
        """HEMRA's own few, bounded events (markers, exits): never dropped."""
        for message in events:
            message = _bounded(message)
            self._queue(message, _size(message))
        await self._maybe_flush()

    @property
    def dropped_bytes(self) -> int:
        return self._dropped_bytes

    def _admit(self, message: pb.Event) -> None:
        message = _bounded(_not_own(message))
        size = _size(message)
        if self._kept + size <= self.max_bytes:
            self._kept += size
            self._queue(message, size)
        elif (
            message.type in ("status", "error") and size <= SMALL_EVENT_BYTES and self._reserve + size <= RESERVE_BYTES
        ):
            self._reserve += size
            self._queue(message, size)
        else:
            if not self._dropped_events:
                self._queue(
                    event(
                        "status",
                        "events_truncated",
                        kept_bytes=self._kept,
                        max_bytes=self.max_bytes,
                        message=f"the attempt's events reached {self.max_bytes} bytes: "
                        "later output and events are dropped (counted at the end)",
                    ),
                    0,
                )
            self._dropped_bytes += size
            self._dropped_events += 1

    def _queue(self, message: pb.Event, size: int) -> None:
        self._pending.append(message)
        self._pending_bytes += size

    async def _maybe_flush(self) -> None:
        if (
            len(self._pending) >= FLUSH_EVENTS
            or self._pending_bytes >= FLUSH_BYTES
            or time.monotonic() - self._last_flush > FLUSH_SECS
        ):
            await self._send()

    async def flush(self) -> None:
        """Send what waits, with a count of what was dropped since the last count."""
        if self._dropped_events > self._reported:
            self._reported = self._dropped_events
            self._queue(
                event(
                    "status",
                    "events_dropped",
                    dropped_bytes=self._dropped_bytes,
                    dropped_events=self._dropped_events,
                    kept_bytes=self._kept,
                    max_bytes=self.max_bytes,
                ),
                0,
            )
        await self._send()

    async def _send(self) -> None:
        async with self._lock:
            if not self._pending:
                return
            batch, self._pending, self._pending_bytes = self._pending, [], 0
            self._last_flush = time.monotonic()
            request = spb.AppendEventsRequest(
                job=self.job_id, lease_token=self.lease_token, events=batch, first_seq=self._appended + 1
            )
            response = await self.store.AppendEvents(request, retry_for=self.retry_for)
            self._appended = response.last_seq or self._appended + len(batch)


def _not_own(message: pb.Event) -> pb.Event:
    """An event of a type only HEMRA writes (the usage its relay read) that came from elsewhere:
    kept as an error saying so, never counted as HEMRA's."""
    if message.type != USAGE_OBSERVED:
        return message
    return event(
        "error",
        "reserved_event",
        message=f"an event of type {USAGE_OBSERVED!r} came from the harness: only HEMRA writes those",
        event_name=message.name[:MAX_NAME],
        payload_head=message.payload_json[:SMALL_EVENT_BYTES],
    )


def _size(message: pb.Event) -> int:
    return len(message.payload_json.encode()) + len(message.type) + len(message.name)


def _bounded(message: pb.Event) -> pb.Event:
    """The event with a short type and name and a JSON object payload of at most
    MAX_EVENT_PAYLOAD bytes (a longer or invalid one is replaced by its head, marked)."""
    payload = message.payload_json
    size = len(payload.encode()) if len(payload) <= MAX_EVENT_PAYLOAD else MAX_EVENT_PAYLOAD + 1
    valid = False
    if size <= MAX_EVENT_PAYLOAD:
        try:
            valid = isinstance(json.loads(payload or "{}"), dict)
        except ValueError:
            valid = False
    if valid and len(message.type) <= MAX_NAME and len(message.name) <= MAX_NAME:
        return message
    bounded = pb.Event()
    bounded.CopyFrom(message)
    bounded.type, bounded.name = message.type[:MAX_NAME], message.name[:MAX_NAME]
    if not valid:
        head = payload[:MAX_TEXT]
        bounded.payload_json = json.dumps(
            {
                "payload_truncated": size > MAX_EVENT_PAYLOAD,
                "payload_invalid": size <= MAX_EVENT_PAYLOAD,
                "payload_chars": len(payload),
                "payload_head": head,
            },
            ensure_ascii=False,
        )
    return bounded
