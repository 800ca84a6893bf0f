"""The HTTP API in processes of its own, for `hemra serve --http-processes N`.

One `hemra serve` process runs the store, the services and the HTTP API on one event loop, so
under the GIL it uses one core: 8 dashboard readers at once get no more answers a second than
one. With N processes here, each serves the API from a listening socket of its own that
`hemra serve` made on the same port (SO_REUSEPORT: the kernel spreads new connections over
them; gateway/server.py's listening_sockets), and reads through a store replica of its own
over the same database, as a deployment's store replicas share one: its StoreServicer called
in process as the gateway's role (services/common/inprocess.py). So one request's whole work,
HTTP, JSON and store, runs on one core beside another's. They only read: every write stays
with the serve process. What a replica keeps is checked as a deployment's replicas check it
(each run's judge_version); on a SQLite file it also forgets everything once another
connection has committed (warm.Watch), as the warm store does.

A child: python -m hemra.services.compose.http_processes --fd N [--ui DIR] [--any-host]; the
database URL and blob folder come in the environment (STORE_ENV: a URL may hold a password),
never on its command line.
"""

import argparse
import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

#: Where a child finds its store: {"database_url", "blob_dir"} (removed from its environment once read).
STORE_ENV = "HEMRA_HTTP_PROCESS_STORE"
#: What a child prints once it serves.
READY = "serving"
#: Seconds a child may take to start serving.
START_SECS = 60.0
#: How often a child checks that its parent is still there (it exits when not).
PARENT_CHECK_SECS = 1.0


class HttpProcesses:
    """N children serving the HTTP API on one port, each on a socket of its own; url and stop()
    as hemra.gateway.server's web has."""

    def __init__(self, address: tuple, children: list[subprocess.Popen]):
        self.address = address
        self.children = children

    @property
    def url(self) -> str:
        host, port = self.address[:2]
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


async def start(
    sockets: list[socket.socket], database_url: str, blob_dir: Path, ui: Path | None, any_host: bool
) -> HttpProcesses:
    """A child serving the API on each of `sockets` from the store over `database_url` (already
    migrated), each started and serving; raises OSError (the children stopped) when one could
    not start. The sockets are the children's then: this process closes them, so that one whose
    child is gone is closed, and the kernel hands its share of connections to the others."""
    options = ["--ui", str(ui)] if ui is not None else []
    options += ["--any-host"] if any_host else []
    env = os.environ | {STORE_ENV: json.dumps({"database_url": database_url, "blob_dir": str(blob_dir)})}
    children = []
    processes = HttpProcesses(sockets[0].getsockname(), children)
    try:
        for sock in sockets:
            command = [
                sys.executable,
                "-m",
                "hemra.services.compose.http_processes",
                "--fd",
                str(sock.fileno()),
                *options,
            ]
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
    finally:
        for sock in sockets:
            sock.close()
    return processes


async def serve(fd: int, ui: Path | None, any_host: bool) -> None:
    import uvicorn

    from hemra.gateway.app import create_app
    from hemra.gateway.security import LOOPBACK_HOSTS

    store, client, watch = await _replica(json.loads(os.environ.pop(STORE_ENV)))
    app = create_app(client, ui_dir=ui, allowed_hosts=None if any_host else LOOPBACK_HOSTS)
    server = uvicorn.Server(uvicorn.Config(_watched(app, watch), log_level="warning", lifespan="off"))
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
    try:
        while not task.done():  # a parent that went away (killed) takes its children along
            await asyncio.wait({task}, timeout=PARENT_CHECK_SECS)
            if os.getppid() != parent:
                server.should_exit = True
        task.result()
    finally:
        if watch is not None:
            watch.close()
        await store.close()


async def _replica(where: dict):
    """This process's read replica of the serve process's store: the store, a client calling
    its servicer in process as the gateway, and its watch on a SQLite file (else None)."""
    from hemra.services.common import auth, inprocess
    from hemra.services.store import db, warm
    from hemra.services.store.service import Store
    from hemra.services.store.servicer import StoreServicer

    store = await Store.open(where["database_url"], Path(where["blob_dir"]), migrate=False)
    client = inprocess.store(StoreServicer(store), auth.SENDS["gateway"], translate=db.as_outage)
    sqlite_file = warm.eligible(where["database_url"])
    return store, client, warm.Watch(store, store.engine.url.database) if sqlite_file else None


def _watched(app, watch):
    """`app`, forgetting the replica's caches before a request once another connection has
    committed to the SQLite file (no watch: the app as it is)."""
    if watch is None:
        return app

    async def watched(scope, receive, send):
        if scope["type"] == "http":
            watch.before_call()
        await app(scope, receive, send)

    return watched


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m hemra.services.compose.http_processes", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--fd", type=int, required=True, help="the listening socket, inherited")
    parser.add_argument("--ui", type=Path, default=None)
    parser.add_argument("--any-host", action="store_true", help="answer any Host name (hemra serve --expose)")
    args = parser.parse_args(argv)
    asyncio.run(serve(args.fd, args.ui, args.any_host))


if __name__ == "__main__":
    main()
