"""The HTTP server the gateway and `hemra serve` start (gateway/server.py)."""

import socket

import httpx
from fastapi import FastAPI

from gateway.server import start_http, stop_http, url_of


async def test_kept_alive_connections_send_at_once():
    """TCP_NODELAY on the listener, inherited by every accepted connection: without it each
    request after the first on a kept-alive connection waited ~45 ms (Nagle's algorithm against
    the client's delayed ACK). bench/gateway.py measures the latency; this checks the cause."""
    app = FastAPI()
    app.get("/ok")(lambda: {"ok": True})
    web = await start_http(app, "127.0.0.1:0")
    try:
        [listener] = web[0].servers[0].sockets
        assert listener.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 1
        async with httpx.AsyncClient(base_url=url_of(web)) as client:  # one kept-alive connection
            assert [(await client.get("/ok")).json() for _ in range(3)] == [{"ok": True}] * 3
    finally:
        await stop_http(web)
