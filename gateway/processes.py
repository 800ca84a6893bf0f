"""The HTTP API in processes of its own, for `hemra serve --http-processes N`.

One `hemra serve` process runs the store, the services and the HTTP API on one event loop, so
under the GIL it uses one core: 8 dashboard readers at once get no more answers a second than
one. With N processes here, each serves the API from the listening socket `hemra serve` made
(the kernel hands each accepted connection to one of them) and reads from the serve process's
store over its loopback gRPC port, as a deployment's gateway does: the HTTP and JSON work of
one request runs beside the store work of another, on another core.

A child: python -m hemra.gateway.processes --store HOST:PORT --fd N [--ui DIR] [--any-host]; the
store token comes in the environment (TOKEN_ENV), never on its command line.
"""

import argparse
import asyncio
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

from hemra.services.common import transport

#: Where a child finds the token it reads the store with (removed from its environment once read).
TOKEN_ENV = "HEMRA_HTTP_PROCESS_TOKEN"
#: What a child prints once it serves.
READY = "serving"
#: Seconds a child may take to start serving.
START_SECS = 60.0
#: How often a child checks that its parent is still there (it exits when not).
PARENT_CHECK_SECS = 1.0


class HttpProcesses:
    """N children serving the HTTP API on `sock`; url and stop() as hemra.gateway.server's web has."""

    def __init__(self, sock: socket.socket, children: list[subprocess.Popen]):
        self.sock = sock
        self.children = children

    @property
    def url(self) -> str:
        host, port = self.sock.getsockname()[:2]
        return f"http://{f'[{host}]' if ':' in host else host}:{port}/"

    async def stop(self) -> None:
        for child in self.children:
            if child.poll() is None:
                child.terminate()
        for child in self.children:
            try:
                await asyncio.to_thread(child.wait, 10)
            except subprocess.TimeoutExpired:
                child.kill()
                await asyncio.to_thread(child.wait)
        self.sock.close()


async def start(
    count: int, sock: socket.socket, store: str, token: str, ui: Path | None, any_host: bool
) -> HttpProcesses:
    """`count` children serving the API on `sock`, each started and serving; raises OSError
    (the children stopped) when one could not start."""
    command = [sys.executable, "-m", "hemra.gateway.processes", "--store", store, "--fd", str(sock.fileno())]
    command += ["--ui", str(ui)] if ui is not None else []
    command += ["--any-host"] if any_host else []
    env = os.environ | {TOKEN_ENV: token}
    children = []
    processes = HttpProcesses(sock, children)
    try:
        for _ in range(count):
            children.append(
                subprocess.Popen(command, env=env, pass_fds=(sock.fileno(),), stdout=subprocess.PIPE, text=True)
            )
        for child in children:
            line = await asyncio.wait_for(asyncio.to_thread(child.stdout.readline), START_SECS)
            if line.strip() != READY:
                raise OSError(f"an HTTP process did not start (exit status {child.poll()})")
    except (OSError, TimeoutError) as exc:
        await processes.stop()
        raise OSError(f"the HTTP processes did not start: {exc}") from None
    return processes


async def serve(store_address: str, fd: int, ui: Path | None, any_host: bool) -> None:
    import uvicorn

    from hemra.gateway.app import create_app
    from hemra.gateway.security import LOOPBACK_HOSTS

    token = os.environ.pop(TOKEN_ENV, "")
    channel = transport.channel(store_address)
    store = transport.store(channel, token)
    app = create_app(store, ui_dir=ui, allowed_hosts=None if any_host else LOOPBACK_HOSTS)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    server.install_signal_handlers = lambda: None
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, lambda: setattr(server, "should_exit", True))
    task = asyncio.create_task(server.serve(sockets=[socket.socket(fileno=fd)]))
    while not server.started and not task.done():
        await asyncio.sleep(0.02)
    if server.started:
        print(READY, flush=True)
    parent = os.getppid()
    while not task.done():  # a parent that went away (killed) takes its children along
        await asyncio.wait({task}, timeout=PARENT_CHECK_SECS)
        if os.getppid() != parent:
            server.should_exit = True
    await channel.close()
    task.result()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m hemra.gateway.processes", description=__doc__.split("\n")[0])
    parser.add_argument("--store", required=True, help="the store's HOST:PORT")
    parser.add_argument("--fd", type=int, required=True, help="the listening socket, inherited")
    parser.add_argument("--ui", type=Path, default=None)
    parser.add_argument("--any-host", action="store_true", help="answer any Host name (hemra serve --expose)")
    args = parser.parse_args(argv)
    asyncio.run(serve(args.store, args.fd, args.ui, args.any_host))


if __name__ == "__main__":
    main()
