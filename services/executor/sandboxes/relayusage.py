"""What the model relay sees of an agent's model calls: the token usage in each HTTP response
from a model endpoint, read by HEMRA itself whatever the agent (or its CLI) reports.

The relay pipes bytes; a `Watcher` is fed a copy of the endpoint's answer on one connection
(after the bytes went on to the agent) and follows HTTP/1.1 in it: responses one after another
on a kept-alive connection, bodies framed by Content-Length, chunked or by the connection's end,
gzip/deflate (and br or zstd when the modules are there) undone, JSON bodies and server-sent
events read for their `usage`:

- Anthropic Messages: `usage` of the message (JSON), or of `message_start` and `message_delta`
  (SSE; a later figure replaces an earlier one);
- OpenAI Chat Completions: `usage.prompt_tokens/completion_tokens` (JSON, or the last chunk of
  a stream asked for with stream_options.include_usage);
- OpenAI Responses: `usage` of the response (JSON, or of the `response.completed` event).

It is bounded (at most MAX_PARSED bytes of one response are read, past that its usage is
unknown) and never raises: anything it cannot follow makes that response's usage unknown,
counted as `unreadable`. TLS cannot be read (an https endpoint is piped end to end): each TLS
connection counts one unreadable.
"""

import json
import logging
import zlib
from dataclasses import dataclass, fields

logger = logging.getLogger(__name__)

#: The most of one response (decoded) that is read for its usage.
MAX_PARSED = 64 * 1024 * 1024
#: The longest response head (status line and headers) followed.
MAX_HEAD = 64 * 1024
#: The longest chunk-size line of a chunked body.
MAX_CHUNK_LINE = 4096
#: The token counts kept, in the order they are shown.
TOKENS = ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
#: One figure larger than this is not believed (counted as unreadable instead).
MAX_TOKENS = 2**40


@dataclass
class Observed:
    """Usage the relay saw: token sums, model calls whose usage was read, and responses (or
    TLS connections) whose usage could not be."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0
    model_calls: int = 0
    unreadable: int = 0

    def add(self, other: "Observed") -> None:
        for item in fields(self):
            setattr(self, item.name, getattr(self, item.name) + getattr(other, item.name))

    def as_dict(self) -> dict:
        return {item.name: getattr(self, item.name) for item in fields(self)}


def usage_of(frame) -> dict | None:
    """The token counts one JSON object of a model API says (None when it says none)."""
    if not isinstance(frame, dict):
        return None
    usage = frame.get("usage")
    if not isinstance(usage, dict):
        inner = frame.get("message") if frame.get("type") == "message_start" else frame.get("response")
        usage = inner.get("usage") if isinstance(inner, dict) else None
    if not isinstance(usage, dict):
        return None
    details = usage.get("prompt_tokens_details") or usage.get("input_tokens_details") or {}
    found = {
        "input_tokens": usage.get("input_tokens", usage.get("prompt_tokens")),
        "output_tokens": usage.get("output_tokens", usage.get("completion_tokens")),
        "cache_read_input_tokens": usage.get(
            "cache_read_input_tokens", details.get("cached_tokens") if isinstance(details, dict) else None
        ),
        "cache_creation_input_tokens": usage.get("cache_creation_input_tokens"),
    }
    counts = {
        name: value
        for name, value in found.items()
        if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_TOKENS
    }
    return counts or None


class _Unreadable(Exception):
    """This response's usage cannot be known."""


def _decoder(encoding: str):
    """A streaming decoder for a Content-Encoding (None: identity); raises _Unreadable."""
    encoding = encoding.strip().lower()
    if encoding in ("", "identity"):
        return None
    if encoding in ("gzip", "x-gzip"):
        return zlib.decompressobj(16 + zlib.MAX_WBITS)
    if encoding == "deflate":
        return _Deflate()
    if encoding == "br":
        try:
            import brotli  # optional

            return _Brotli(brotli.Decompressor())
        except ImportError:
            raise _Unreadable("br without the brotli module") from None
    if encoding == "zstd":
        try:
            import zstandard  # optional

            return zstandard.ZstdDecompressor().decompressobj()
        except ImportError:
            raise _Unreadable("zstd without the zstandard module") from None
    raise _Unreadable(f"content encoding {encoding!r}")


class _Deflate:
    """deflate as servers send it: zlib-wrapped, or (some) raw."""

    def __init__(self):
        self._inner = None

    def decompress(self, data: bytes, limit: int = 0) -> bytes:
        if self._inner is None:
            raw = bool(data) and (data[0] & 0x0F) != 8
            self._inner = zlib.decompressobj(-zlib.MAX_WBITS if raw else zlib.MAX_WBITS)
        return self._inner.decompress(data, limit)


class _Brotli:
    def __init__(self, inner):
        self._inner = inner

    def decompress(self, data: bytes, limit: int = 0) -> bytes:
        return self._inner.process(data)


class _Body:
    """One response's decoded body, read for its usage: SSE events as they come, or the whole
    JSON body at its end. Bounded by MAX_PARSED."""

    def __init__(self, content_type: str, encoding: str):
        self.sse = "text/event-stream" in content_type.lower()
        self.decoder = _decoder(encoding)
        self.parsed = 0
        self.buffer = bytearray()
        self.data: list[bytes] = []  # the data lines of the SSE event being read
        self.usage: dict[str, int] = {}

    def feed(self, data: bytes) -> None:
        if self.decoder is not None:
            room = MAX_PARSED - self.parsed + 1
            data = self.decoder.decompress(data, room) if room > 0 else b"x"
        self.parsed += len(data)
        if self.parsed > MAX_PARSED:
            raise _Unreadable(f"over {MAX_PARSED} bytes")
        self.buffer += data
        if self.sse:
            self._events()

    def end(self) -> None:
        if self.sse:
            self.buffer += b"\n\n"
            self._events()
        elif self.buffer.strip():
            try:
                self._take(json.loads(bytes(self.buffer)))
            except ValueError:
                raise _Unreadable("a body that is not JSON") from None
        self.buffer.clear()

    def _events(self) -> None:
        start = 0
        while (newline := self.buffer.find(b"\n", start)) >= 0:
            line = bytes(self.buffer[start:newline]).rstrip(b"\r")
            start = newline + 1
            if not line:
                if self.data:
                    payload = b"\n".join(self.data)
                    self.data = []
                    if payload.strip() != b"[DONE]":
                        try:
                            self._take(json.loads(payload))
                        except ValueError:
                            pass  # not every event is JSON
            elif line.startswith(b"data:"):
                self.data.append(line[5:].removeprefix(b" "))
        del self.buffer[:start]

    def _take(self, frame) -> None:
        found = usage_of(frame)
        if found:
            self.usage.update(found)  # a later figure (message_delta) replaces an earlier one


class Watcher:
    """Follows the endpoint's side of one relayed connection; `done` holds what its finished
    responses said. `feed` and `close` never raise."""

    def __init__(self):
        self.done = Observed()
        self._state = "head"  # head, length, chunk-size, chunk-data, chunk-end, trailers, eof, off
        self._head = bytearray()
        self._left = 0
        self._line = bytearray()
        self._body: _Body | None = None
        self._failed = False  # this response's usage is unknown; its bytes are still framed
        self._first = True

    def feed(self, data: bytes) -> None:
        try:
            self._feed(memoryview(data))
        except Exception as exc:  # never into the pipe: this connection is not followed any more
            logger.debug("model relay: cannot follow a response: %s", exc)
            if self._state != "off":
                self._finish(failed=True)
                self._state = "off"

    def current(self) -> Observed:
        """What the finished responses said, with the one under way (cut short: as far as read)."""
        seen = Observed()
        seen.add(self.done)
        if self._state not in ("head", "off") or self._head:
            usage = self._body.usage if self._body is not None and not self._failed else None
            if usage:
                _count(seen, usage)
            else:
                seen.unreadable += 1
        return seen

    def close(self) -> Observed:
        """The connection ended: a body read to its end is finished; one cut short counts as far
        as it was read. Returns everything this connection saw."""
        try:
            if self._state == "eof":
                self._finish()
            elif self._state == "off" or (self._state == "head" and not self._head):
                pass
            else:
                self._finish(cut=True)
        except Exception:
            self.done.unreadable += 1
        self._state = "off"
        return self.done

    # -- the HTTP/1.1 response stream --------------------------------------------------------

    def _feed(self, data: memoryview) -> None:
        if self._first and len(data):
            self._first = False
            if data[0] == 0x16:  # a TLS handshake record: nothing inside can be read
                self.done.unreadable += 1
                self._state = "off"
        while len(data) and self._state != "off":
            if self._state == "head":
                data = self._read_head(data)
            elif self._state == "length":
                take = min(self._left, len(data))
                self._give(data[:take])
                self._left -= take
                data = data[take:]
                if not self._left:
                    self._finish()
            elif self._state == "eof":
                self._give(data)
                data = data[len(data) :]
            elif self._state in ("chunk-size", "chunk-end", "trailers"):
                data = self._read_line(data)
            elif self._state == "chunk-data":
                take = min(self._left, len(data))
                self._give(data[:take])
                self._left -= take
                data = data[take:]
                if not self._left:
                    self._state = "chunk-end"

    def _read_line(self, data: memoryview) -> memoryview:
        newline = bytes(data[:MAX_CHUNK_LINE]).find(b"\n")
        if newline < 0:
            self._line += data
            if len(self._line) > MAX_CHUNK_LINE:
                raise ValueError("a chunk line too long")
            return data[len(data) :]
        self._line += data[:newline]
        line, self._line = bytes(self._line).strip(), bytearray()
        data = data[newline + 1 :]
        if self._state == "chunk-size":
            size = int(line.split(b";", 1)[0], 16)
            if size:
                self._left, self._state = size, "chunk-data"
            else:
                self._state = "trailers"
        elif self._state == "chunk-end":
            if line:
                raise ValueError("a chunk without its CRLF")
            self._state = "chunk-size"
        elif not line:  # the blank line after the trailers
            self._finish()
        return data

    def _read_head(self, data: memoryview) -> memoryview:
        before = len(self._head)
        self._head += data
        end = self._head.find(b"\r\n\r\n", max(before - 3, 0))
        if end < 0:
            if len(self._head) > MAX_HEAD:
                raise ValueError("a response head too long")
            return data[len(data) :]
        head, rest = bytes(self._head[:end]), len(self._head) - (end + 4)
        self._head = bytearray()
        data = data[len(data) - rest :]
        lines = head.decode("latin-1").split("\r\n")
        parts = lines[0].split(" ", 2)
        if not parts[0].startswith("HTTP/1.") or len(parts) < 2:
            raise ValueError(f"not an HTTP/1 response: {lines[0][:40]!r}")
        status = int(parts[1])
        headers: dict[str, str] = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            name = name.strip().lower()
            headers[name] = f"{headers[name]}, {value.strip()}" if name in headers else value.strip()
        if status == 101:  # switched protocols (a WebSocket): not HTTP any more
            self.done.unreadable += 1
            self._state = "off"
            return data
        if 100 <= status < 200:
            return data  # an interim answer; the real one follows
        self._failed = False
        try:
            self._body = _Body(headers.get("content-type", ""), headers.get("content-encoding", ""))
        except _Unreadable:
            self._body, self._failed = None, True
        if status in (204, 304):
            self._finish()
        elif "chunked" in headers.get("transfer-encoding", "").lower():
            self._state = "chunk-size"
        elif "content-length" in headers:
            self._left = int(headers["content-length"].split(",")[0])
            self._state = "length"
            if not self._left:
                self._finish()
        else:
            self._state = "eof"
        return data

    def _give(self, data: memoryview) -> None:
        if self._failed or self._body is None:
            return
        try:
            self._body.feed(bytes(data))
        except Exception:  # noqa: BLE001 - any failure of a body only makes its usage unknown
            self._failed = True

    def _finish(self, failed: bool = False, cut: bool = False) -> None:
        """The response ended (or was cut short, or cannot be followed): count what it said.
        One read whole that says no usage (an error, a model list) is no model call."""
        body, self._body = self._body, None
        failed = failed or self._failed or body is None
        self._state, self._failed = "head", False
        if not failed:
            try:
                body.end()
            except Exception:  # noqa: BLE001 - a body that cannot be read only makes its usage unknown
                failed = not (cut and body.usage)
        if body is not None and body.usage and not failed:
            _count(self.done, body.usage)
        elif failed or cut:
            self.done.unreadable += 1


def _count(total: Observed, usage: dict[str, int]) -> None:
    total.model_calls += 1
    for name in TOKENS:
        setattr(total, name, getattr(total, name) + usage.get(name, 0))
