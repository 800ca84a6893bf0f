"""The usage HEMRA reads itself in the model endpoints' answers as the relay pipes them
(services/executor/sandboxes/relayusage.py): the three model APIs, streamed or not, framed
every way HTTP/1.1 frames them; and through the real relay to the scripted model server."""

import asyncio
import gzip
import json
import zlib

import pytest

from hemra.services.executor.sandboxes import relayusage
from hemra.services.executor.sandboxes.relay import Relay
from hemra.services.executor.sandboxes.relayusage import Watcher
from tests.modelserver import ModelServer, parse

# -- Captured shapes of each API's answers ---------------------------------------------------------

ANTHROPIC_JSON = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "content": [{"type": "text", "text": "Done."}],
    "stop_reason": "end_turn",
    "usage": {
        "input_tokens": 120,
        "output_tokens": 34,
        "cache_creation_input_tokens": 7,
        "cache_read_input_tokens": 900,
    },
}
ANTHROPIC_SSE = [
    (
        "message_start",
        {
            "type": "message_start",
            "message": {
                "id": "msg_2",
                "type": "message",
                "content": [],
                "usage": {
                    "input_tokens": 50,
                    "output_tokens": 1,
                    "cache_creation_input_tokens": 0,
                    "cache_read_input_tokens": 4000,
                },
            },
        },
    ),
    ("ping", {"type": "ping"}),
    ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {"type": "text"}}),
    ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {"text": "usage: 99"}}),
    ("content_block_stop", {"type": "content_block_stop", "index": 0}),
    ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 66}}),
    ("message_stop", {"type": "message_stop"}),
]
CHAT_JSON = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"}}],
    "usage": {"prompt_tokens": 200, "completion_tokens": 20, "prompt_tokens_details": {"cached_tokens": 64}},
}
CHAT_SSE = [
    (None, {"object": "chat.completion.chunk", "choices": [{"delta": {"content": "h"}}], "usage": None}),
    (None, {"object": "chat.completion.chunk", "choices": [{"delta": {}, "finish_reason": "stop"}], "usage": None}),
    (None, {"object": "chat.completion.chunk", "choices": [], "usage": {"prompt_tokens": 300, "completion_tokens": 3}}),
    (None, "[DONE]"),
]
RESPONSES_JSON = {
    "id": "resp_1",
    "object": "response",
    "status": "completed",
    "usage": {"input_tokens": 410, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 41},
}
RESPONSES_SSE = [
    ("response.created", {"type": "response.created", "response": {"id": "resp_2", "usage": None}}),
    ("response.output_text.delta", {"type": "response.output_text.delta", "delta": "ok"}),
    (
        "response.completed",
        {
            "type": "response.completed",
            "response": {"id": "resp_2", "usage": {"input_tokens": 5000, "output_tokens": 500}},
        },
    ),
]


def sse(frames) -> bytes:
    out = b""
    for name, data in frames:
        payload = data if isinstance(data, str) else json.dumps(data)
        out += ((f"event: {name}\n" if name else "") + f"data: {payload}\n\n").encode()
    return out


def response(body: bytes, *, sse_body=False, chunked=False, encoding="", pieces=3) -> bytes:
    """An HTTP/1.1 response as servers send it: Content-Length or chunked (in `pieces`)."""
    if encoding == "gzip":
        body = gzip.compress(body)
    elif encoding == "deflate":
        body = zlib.compress(body)
    head = "HTTP/1.1 200 OK\r\n" + f"Content-Type: {'text/event-stream' if sse_body else 'application/json'}\r\n"
    head += f"Content-Encoding: {encoding}\r\n" if encoding else ""
    if not chunked:
        return f"{head}Content-Length: {len(body)}\r\n\r\n".encode() + body
    step = max(len(body) // pieces, 1)
    out = f"{head}Transfer-Encoding: chunked\r\n\r\n".encode()
    for start in range(0, len(body), step):
        piece = body[start : start + step]
        out += f"{len(piece):x};ext=1\r\n".encode() + piece + b"\r\n"
    return out + b"0\r\n\r\n"


def watch(stream: bytes, piece: int = 0) -> dict:
    """What a watcher fed `stream` (whole, or `piece` bytes at a time) says at the connection's end."""
    watcher = Watcher()
    for start in range(0, len(stream), piece or len(stream) or 1):
        watcher.feed(stream[start : start + (piece or len(stream))])
    return watcher.close().as_dict()


def seen(input_tokens=0, output_tokens=0, cache_read=0, cache_creation=0, calls=1, unreadable=0) -> dict:
    return {
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "cache_read_input_tokens": cache_read,
        "cache_creation_input_tokens": cache_creation,
        "model_calls": calls,
        "unreadable": unreadable,
    }


CASES = {
    "anthropic-json": (response(json.dumps(ANTHROPIC_JSON).encode()), seen(120, 34, 900, 7)),
    "anthropic-sse-chunked": (response(sse(ANTHROPIC_SSE), sse_body=True, chunked=True), seen(50, 66, 4000)),
    "anthropic-sse-length": (response(sse(ANTHROPIC_SSE), sse_body=True), seen(50, 66, 4000)),
    "chat-json": (response(json.dumps(CHAT_JSON).encode(), chunked=True), seen(200, 20, 64)),
    "chat-sse-include-usage": (response(sse(CHAT_SSE), sse_body=True, chunked=True), seen(300, 3)),
    "responses-json": (response(json.dumps(RESPONSES_JSON).encode()), seen(410, 41)),
    "responses-sse": (response(sse(RESPONSES_SSE), sse_body=True, chunked=True, pieces=7), seen(5000, 500)),
    "gzip-json": (response(json.dumps(ANTHROPIC_JSON).encode(), encoding="gzip"), seen(120, 34, 900, 7)),
    "deflate-sse": (response(sse(RESPONSES_SSE), sse_body=True, chunked=True, encoding="deflate"), seen(5000, 500)),
}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("piece", [0, 1, 7, 4096])
def test_watcher__each_api_streamed_or_not_in_any_pieces(case, piece):
    stream, expected = CASES[case]
    assert watch(stream, piece) == expected


def test_watcher__several_responses_on_one_kept_alive_connection():
    stream = (
        b"HTTP/1.1 100 Continue\r\n\r\n"
        + CASES["anthropic-json"][0]
        + CASES["anthropic-sse-chunked"][0]
        + b"HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\nContent-Length: 13\r\n\r\n"
        + b'{"error": {}}'
        + b"HTTP/1.1 204 No Content\r\n\r\n"
        + CASES["responses-sse"][0]
    )
    # The 404 said no usage: no model call, and nothing unreadable either.
    assert watch(stream, 5) == seen(120 + 50 + 5000, 34 + 66 + 500, 900 + 4000, 7, calls=3)


def test_watcher__body_to_the_connections_end():
    stream = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n" + json.dumps(CHAT_JSON).encode()
    assert watch(stream, 10) == seen(200, 20, 64)


def test_watcher__a_stream_cut_short_counts_as_far_as_it_was_read():
    whole = CASES["anthropic-sse-chunked"][0]
    cut = whole[: whole.index(b"message_delta")]
    assert watch(cut) == seen(50, 1, 4000)  # message_start's figures: the output is its first token
    head_only = whole[: whole.index(b"\r\n\r\n") + 4]
    assert watch(head_only) == seen(calls=0, unreadable=1)
    assert watch(CASES["anthropic-json"][0][:-5]) == seen(calls=0, unreadable=1)  # JSON cut: unknown


def test_watcher__what_cannot_be_read_is_counted_and_the_next_response_still_is(monkeypatch):
    monkeypatch.setattr(relayusage, "MAX_PARSED", 2000)
    big = response(json.dumps(dict(ANTHROPIC_JSON, pad="x" * 5000)).encode(), chunked=True)
    garbage = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 9\r\n\r\nnot json!"
    unknown = b"HTTP/1.1 200 OK\r\nContent-Encoding: snappy\r\nContent-Length: 4\r\n\r\nabcd"
    good = CASES["chat-json"][0]
    assert watch(big + garbage + unknown + good, 100) == seen(200, 20, 64, calls=1, unreadable=3)


def test_watcher__tls_and_non_http_are_unreadable_and_never_raise():
    assert watch(b"\x16\x03\x03\x00\x7a\x02\x00\x00\x76\x03\x03" + bytes(200)) == seen(calls=0, unreadable=1)
    assert watch(b"SSH-2.0-OpenSSH_9.6\r\n\r\nwhatever") == seen(calls=0, unreadable=1)
    bad_chunk = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n"
    assert watch(bad_chunk, 3) == seen(calls=0, unreadable=1)
    assert watch(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n\x81\x05hello") == seen(
        calls=0, unreadable=1
    )
    assert watch(b"") == seen(calls=0)


def test_usage_of__hostile_figures_count_nothing():
    assert relayusage.usage_of({"usage": {"input_tokens": "9", "output_tokens": -1}}) is None
    assert relayusage.usage_of({"usage": {"input_tokens": True, "output_tokens": 2**50}}) is None
    assert relayusage.usage_of({"usage": {"prompt_tokens": 3}}) == {"input_tokens": 3}
    assert relayusage.usage_of(["usage"]) is None


# -- Through the real relay, to the scripted model server ------------------------------------------


async def _exchange(path: str, requests: list[dict]) -> bytes:
    """Send `requests` (HTTP/1.1, one kept-alive connection) to the relay's socket `path`;
    every response read whole, as a client would."""
    reader, writer = await asyncio.open_unix_connection(path)
    got = b""
    try:
        for body in requests:
            data = json.dumps(body).encode()
            route = "/v1/messages" if "max_tokens" in body else "/v1/chat/completions"
            writer.write(
                f"POST {route} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(data)}\r\n\r\n".encode()
                + data
            )
            await writer.drain()
            head = await reader.readuntil(b"\r\n\r\n")
            got += head
            if b"chunked" in head.lower():
                while True:
                    size_line = await reader.readuntil(b"\r\n")
                    chunk = await reader.readexactly(int(size_line.split(b";")[0], 16) + 2)
                    got += size_line + chunk
                    if size_line.strip() == b"0":
                        break
            else:
                length = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
                got += await reader.readexactly(length)
    finally:
        writer.close()
        await writer.wait_closed()
    return got


async def test_relay__counts_the_usage_the_model_server_sent_and_forwards_it_unchanged():
    script = parse([{"text": "one"}, {"text": "two"}, {"text": "three"}])
    script.usage = {"input_tokens": 1234, "output_tokens": 56}
    with ModelServer(script) as server:
        relay = Relay([("127.0.0.1", server.port)], "host")
        await relay.open()
        try:
            assert relay.usage() == seen(calls=0)
            messages = [{"role": "user", "content": "hi"}]
            got = await _exchange(
                str(relay.folder / relay.listeners[0].socket),
                [
                    {"model": "m", "max_tokens": 10, "messages": messages},
                    {"model": "m", "max_tokens": 10, "messages": messages, "stream": True},
                    {"model": "m", "messages": messages, "stream": True, "stream_options": {"include_usage": True}},
                ],
            )
            await asyncio.sleep(0.1)  # the relay's side of the connection ends
            observed = relay.usage()
        finally:
            await relay.close()
    assert observed == seen(3 * 1234, 3 * 56, calls=3)
    assert relay.usage() == observed  # kept after the relay closed
    # The bytes reached the client as the server sent them: every answer is there, whole.
    assert got.count(b"HTTP/1.1 200") == 3 and b"message_stop" in got and got.endswith(b"data: [DONE]\n\n\r\n0\r\n\r\n")
    assert [r.path for r in server.model_requests()] == ["/v1/messages", "/v1/messages", "/v1/chat/completions"]


def test_relay__no_endpoints_observes_nothing():
    assert Relay([]).usage() is None
