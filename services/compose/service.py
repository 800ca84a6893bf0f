"""The service shape (`hemra serve`): every service in this process (compose/embedded.py),
the store also listening where remote workers reach it, the read-only HTTP API and viewer, and
an executor working the queue (Embedded.start_executor). The HTTP API is the gateway's, a
client of the store like any other: it reads through the store service only, calling this
process's store servicer in process with a gRPC call's contract (services/common/inprocess.py).
"""

from pathlib import Path

from hemra.services.common import auth
from hemra.services.compose import embedded


def services(home: Path, database_url: str | None, credentials: auth.Credentials, store_listen: str, tls):
    """The embedded services, the store also on `store_listen` (with TLS: (key, certificate)),
    every server taking `credentials`: an async context manager (OSError: a port is taken)."""
    return embedded.services(home, database_url, credentials, store_listen, tls)


async def start_gateway(
    services: embedded.Embedded,
    listen: str,
    ui: Path | None,
    expose: bool,
    processes: int = 0,
):
    """The HTTP API on this event loop, calling this process's store servicer directly with the
    gateway's role (services/common/inprocess.py: the contract of a gRPC call, without the
    loopback hop), or in `processes` processes of their own (http_processes.py), each calling
    a read replica of the store over the same database the same way. The app reads through
    the store service only. OSError: `listen` cannot be listened on."""
    from hemra.gateway.app import create_app
    from hemra.gateway.server import listening_sockets, start_http

    if processes:
        from hemra.services.compose import http_processes

        sockets = listening_sockets(listen, processes)
        settings = services.store_settings
        return await http_processes.start(sockets, settings.database_url, settings.blob_dir, ui, expose)
    store = services.store_in_process(auth.SENDS["gateway"])
    app = create_app(store, ui_dir=ui, **({"allowed_hosts": None} if expose else {}))
    return await start_http(app, listen)


async def stop_gateway(web) -> None:
    from hemra.gateway.server import stop_http

    await (web.stop() if hasattr(web, "stop") else stop_http(web))


def gateway_url(web) -> str:
    """Where the HTTP API answers (an in-process server, or the processes')."""
    from hemra.gateway.server import url_of

    return web.url if hasattr(web, "url") else url_of(web)
