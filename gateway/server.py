"""Serve the gateway's HTTP app with uvicorn on the running event loop."""

import asyncio
import socket

from hemra.services.common.transport import split_listen


def listening_socket(listen: str) -> socket.socket:
    """A TCP socket listening on `listen` (HOST:PORT). Raises OSError when it cannot."""
    host, port = split_listen(listen)
    sock = socket.create_server((host, port), family=socket.AF_INET6 if ":" in host else socket.AF_INET)
    # Accepted connections inherit this: without it a response's separate writes (headers, body)
    # wait for the client's delayed ACK, ~45 ms on every kept-alive request after the first.
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


async def start_http(app, listen: str):
    """uvicorn serving `app` on `listen`, started; returns (server, task). Raises OSError when
    it cannot listen there (bound here: uvicorn exits the whole process when it cannot bind)."""
    import uvicorn

    sock = listening_socket(listen)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    server.install_signal_handlers = lambda: None  # the caller's handlers decide the order of stopping
    task = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started:
        if task.done():
            task.result()
            raise OSError(f"could not start the HTTP server on {listen}")
        await asyncio.sleep(0.02)
    return server, task


def url_of(web) -> str:
    server, _ = web
    sock = server.servers[0].sockets[0].getsockname()
    host = f"[{sock[0]}]" if ":" in sock[0] else sock[0]
    return f"http://{host}:{sock[1]}/"


async def stop_http(web) -> None:
    server, task = web
    server.should_exit = True
    await asyncio.gather(task, return_exceptions=True)
