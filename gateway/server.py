"""Serve the gateway's HTTP app with uvicorn on the running event loop."""

import asyncio
import socket

from hemra.services.common.transport import split_listen


def listening_socket(listen: str, reuse_port: bool = False) -> socket.socket:
    """A TCP socket listening on `listen` (HOST:PORT). Raises OSError when it cannot."""
    host, port = split_listen(listen)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.create_server((host, port), family=family, reuse_port=reuse_port)
    # Accepted connections inherit this: without it a response's separate writes (headers, body)
    # wait for the client's delayed ACK, ~45 ms on every kept-alive request after the first.
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def listening_sockets(listen: str, count: int) -> list[socket.socket]:
    """`count` TCP sockets listening on the same `listen` (port 0: one free port for all), with
    SO_REUSEPORT: the kernel spreads new connections over them, one socket per serving process.
    (One shared socket would not: the process whose event loop wakes first accepts every
    connection waiting, so 8 clients connecting at once all land on one process. Linux lets
    only the same user bind a port beside them.) Raises OSError when it cannot."""
    first = listening_socket(listen, reuse_port=True)
    sockets = [first]
    try:
        host, port = first.getsockname()[:2]
        for _ in range(count - 1):
            sockets.append(listening_socket(f"[{host}]:{port}" if ":" in host else f"{host}:{port}", reuse_port=True))
    except OSError:
        for sock in sockets:
            sock.close()
        raise
    return sockets


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
