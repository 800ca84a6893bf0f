"""hemra serve, hemra worker and hemra service: the processes that work the queue."""

import asyncio
import importlib
import signal
from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from hemra.clients.cli.common import check_address, command, console, database_url, fail, home
from hemra.services.common import auth, errors, runspec, transport
from hemra.services.common.entry import configure_logging
from hemra.services.common.runspec import BOUNDS
from hemra.services.compose import service as service_shape
from hemra.services.compose import worker as worker_shape
from hemra.v1 import store_service_pb2 as spb

DEFAULT_STORE_LISTEN = "127.0.0.1:7801"
DEFAULT_LISTEN = "127.0.0.1:7878"
#: hemra serve --http-processes at most.
MAX_HTTP_PROCESSES = 64


class ServiceName(str, Enum):
    store = "store"
    planner = "planner"
    executor = "executor"
    scorer = "scorer"
    importer = "importer"
    gateway = "gateway"


def service(
    name: Annotated[ServiceName, typer.Argument(help="Which service to run.")],
    args: Annotated[
        list[str] | None,
        typer.Argument(
            help="Its options, e.g. --listen 127.0.0.1:7801 --store HOST:PORT; "
            "--expose allows a --listen that is not loopback."
        ),
    ] = None,
) -> None:
    """Run one service alone (the same as python -m hemra.services.<name>, python -m hemra.gateway)."""
    args = list(args or [])
    for option in ("--listen", "--front-door") if name is ServiceName.gateway else ("--listen",):
        for listen in listen_options(args, name.value, option):
            check_address(option, listen, listen=True)
    if name is ServiceName.gateway:  # it checks both its listeners and uses --expose itself
        asyncio.run(importlib.import_module("hemra.gateway.__main__").main(args))
        return
    expose = "--expose" in args
    args = [a for a in args if a != "--expose"]
    for listen in listen_options(args, name.value):
        try:
            if not expose and not is_loopback(listen):
                fail(f"--listen {listen} is not a loopback address; add --expose to allow it")
        except ValueError as exc:
            fail(f"--listen: {exc}")
    if expose:
        transport.allow_exposed()
    module = importlib.import_module(f"hemra.services.{name.value}.__main__")
    try:
        asyncio.run(module.main(args))
    except transport.NotLoopback as exc:  # a listener the options above did not name
        fail(str(exc))


#: Each service's listener when --listen is not given (all loopback).
_DEFAULT_LISTEN = {
    "store": "127.0.0.1:7801",
    "planner": "127.0.0.1:7802",
    "executor": "127.0.0.1:7803",
    "scorer": "127.0.0.1:7804",
    "importer": "127.0.0.1:7805",
}


def listen_options(args: list[str], name: str, listener: str = "--listen") -> list[str]:
    """The addresses a service's arguments ask it to listen on (--listen X, --listen=X; argparse
    also takes an unambiguous prefix such as --lis X), else its default. `listener`: the
    option to look for (the gateway's front door has its own)."""
    found = []
    for index, arg in enumerate(args):
        option, equals, value = arg.partition("=")
        if len(option) >= 3 and listener.startswith(option):
            if equals:
                found.append(value)
            elif index + 1 < len(args):
                found.append(args[index + 1])
    return found or [_DEFAULT_LISTEN.get(name, "127.0.0.1:0")]


is_loopback = transport.is_loopback


def serve(
    concurrency: Annotated[
        int,
        typer.Option("--concurrency", help="Attempts this process works at once (0: serve only, workers do the work)."),
    ] = 1,
    listen: Annotated[
        str, typer.Option("--listen", help="Where the HTTP API and the viewer are served.")
    ] = DEFAULT_LISTEN,
    ui: Annotated[
        Path | None,
        typer.Option("--ui", help="Serve this folder at / instead of the trace viewer (e.g. clients/dashboard/dist)."),
    ] = None,
    store_listen: Annotated[
        str, typer.Option("--store-listen", help="Where remote workers reach the store (gRPC).")
    ] = DEFAULT_STORE_LISTEN,
    expose: Annotated[
        bool,
        typer.Option(
            "--expose", help="Allow listening on a non-loopback address (the HTTP API has no authentication)."
        ),
    ] = False,
    tls_cert: Annotated[Path | None, typer.Option("--tls-cert", help="PEM certificate for the store port.")] = None,
    tls_key: Annotated[Path | None, typer.Option("--tls-key", help="PEM private key for the store port.")] = None,
    token_env: Annotated[
        str,
        typer.Option(
            "--token-env",
            help="Variable holding the user's token, or the one token for every role (else HEMRA_HOME/token is "
            "used, made once); HEMRA_WORKER_TOKEN and HEMRA_ADMIN_TOKEN give the other roles their own.",
        ),
    ] = auth.DEFAULT_TOKEN_ENV,
    open_browser: Annotated[
        bool, typer.Option("--open", help="Open the served URL in your web browser once it answers.")
    ] = False,
    http_processes: Annotated[
        int,
        typer.Option(
            "--http-processes",
            help="Serve the HTTP API from this many processes of their own, each reading the "
            "database through a store replica of its own (0: in this process). More cores for "
            "many readers at once.",
        ),
    ] = 0,
) -> None:
    """Serve the read-only HTTP API and trace viewer, and work the store's queue until stopped.

    SIGTERM or Ctrl-C hands running attempts back to the queue; nothing is lost.
    """
    check_concurrency(concurrency, least=0)
    _check_listeners({"--listen": listen, "--store-listen": store_listen}, expose)
    if ui is not None and not (ui / "index.html").is_file():
        fail(f"--ui {ui}: no index.html there (build the dashboard first: npm run build)")
    if (tls_cert is None) != (tls_key is None):
        fail("--tls-cert and --tls-key go together")
    if not 0 <= http_processes <= MAX_HTTP_PROCESSES:
        fail(f"--http-processes must be from 0 to {MAX_HTTP_PROCESSES} (got {http_processes})")
    tls = (tls_key.read_bytes(), tls_cert.read_bytes()) if tls_cert else None
    _serve(concurrency, store_listen, tls, token_env, listen, ui, expose, open_browser, http_processes)


def _check_listeners(addresses: dict[str, str], expose: bool) -> None:
    """Each option's address is one to listen on, and loopback unless --expose (which then
    lets the transport listen on others)."""
    for option, address in addresses.items():
        check_address(option, address, listen=True)
        try:
            if not is_loopback(address) and not expose:
                fail(f"{option} {address} is not a loopback address; add --expose to allow it")
        except ValueError as exc:
            fail(f"{option}: {exc}")
    if expose:
        transport.allow_exposed()


async def _open_browser(url: str) -> None:
    """Open `url` with the user's browser (webbrowser: $BROWSER, else the desktop's); off the
    event loop, since a $BROWSER command is waited for. No browser is a note, not an error."""
    import webbrowser

    try:
        opened = await asyncio.to_thread(webbrowser.open, url)
    except webbrowser.Error:
        opened = False
    if not opened:
        console.print(f"hemra serve: no web browser to open; open {url} yourself", highlight=False)


@command
async def _serve(
    concurrency: int,
    store_listen: str,
    tls,
    token_env: str,
    listen: str,
    ui: Path | None,
    expose: bool,
    open_browser: bool = False,
    http_processes: int = 0,
) -> None:
    configure_logging()
    try:
        credentials = auth.serve_credentials(home(), token_env)
    except auth.TokenError as exc:
        fail(str(exc))
    try:
        context = service_shape.services(home(), database_url(), credentials, store_listen, tls)
        services = await context.__aenter__()
    except OSError as exc:
        fail(f"{exc} (is another hemra serve using it? pass --store-listen 127.0.0.1:0 for a second one)")
    web = None
    try:
        web = await _start_gateway(services, listen, ui, expose, http_processes)
        where = (
            f"store for workers on {services.addresses.get('store_public', services.addresses['store'])}"
            f"{' (TLS)' if tls else ''}, {credentials.source}"
        )
        console.print(
            f"hemra serve: API and {'UI' if ui else 'trace viewer'} on {service_shape.gateway_url(web)}"
            f"{' (no authentication: anyone who can reach it can read the store)' if expose else ''}",
            highlight=False,
        )
        if open_browser:
            await _open_browser(service_shape.gateway_url(web))
        if concurrency == 0:
            console.print(f"hemra serve: serving only (concurrency 0); {where}", highlight=False)
            await _until_stop_signal()
            return
        worker = await services.start_executor(concurrency)
        console.print(f"hemra serve: working the queue with concurrency {concurrency}; {where}", highlight=False)
        await _until_signalled(worker)
    finally:
        if web is not None:
            await service_shape.stop_gateway(web)
        await context.__aexit__(None, None, None)


async def _start_gateway(services, listen: str, ui: Path | None, expose: bool, processes: int = 0):
    try:
        return await service_shape.start_gateway(services, listen, ui, expose, processes)
    except OSError as exc:
        fail(f"--listen {listen}: cannot listen there: {exc.strerror or exc}")


def _stop_signal() -> asyncio.Event:
    stopping = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stopping.set)
    return stopping


async def _until_stop_signal() -> None:
    await _stop_signal().wait()


async def _until_signalled(worker) -> None:
    stopping = _stop_signal()
    work = asyncio.create_task(worker.run())
    await asyncio.wait({work, asyncio.create_task(stopping.wait())}, return_when=asyncio.FIRST_COMPLETED)
    console.print("stopping: handing running attempts back to the queue", highlight=False)
    await worker.stop(release=True)
    await work


def check_concurrency(concurrency: int, least: int) -> None:
    """--concurrency of hemra serve and hemra worker: from `least` to the run's maximum (1000)."""
    if not least <= concurrency <= BOUNDS["concurrency"][1]:
        shown = f"{concurrency:,}" if len(str(concurrency)) <= 30 else f"{str(concurrency)[:27]}..."
        fail(f"--concurrency must be from {least} to {BOUNDS['concurrency'][1]:,} (got {shown})")


def worker(
    store: Annotated[str, typer.Option("--store", help="The store's HOST:PORT (hemra serve --store-listen).")],
    concurrency: Annotated[int, typer.Option("--concurrency", help="Attempts this worker works at once.")] = 1,
    token_env: Annotated[
        str,
        typer.Option(
            "--token-env",
            help="Variable holding the worker token (by default HEMRA_WORKER_TOKEN, else HEMRA_TOKEN for a "
            "deployment with one token).",
            show_default=False,
        ),
    ] = "",
    tls_ca: Annotated[Path | None, typer.Option("--tls-ca", help="PEM CA certificate: connect with TLS.")] = None,
    pool: Annotated[
        str, typer.Option("--pool", help="The executor pool whose runs this worker works (run --pool).")
    ] = runspec.DEFAULTS["pool"],
) -> None:
    """Work a shared store's queue from this machine (sandboxes and scoring run here)."""
    check_address("--store", store)
    check_concurrency(concurrency, least=1)
    if runspec.pool_error(pool):
        fail(f"--pool: {runspec.pool_error(pool)}")
    try:
        tokens, token_env = auth.worker_tokens(token_env)
    except auth.TokenError as exc:
        fail(str(exc))
    credentials = auth.Credentials.of_role(auth.WORKER, tokens, token_env)
    _worker(store, concurrency, credentials, token_env, tls_ca.read_bytes() if tls_ca else None, pool)


@command
async def _worker(
    address: str, concurrency: int, credentials: auth.Credentials, token_env: str, ca: bytes | None, pool: str
) -> None:
    configure_logging()

    async def check(store: transport.Client) -> None:
        await _check_worker_token(store, address, token_env)

    async with worker_shape.worker(address, ca, credentials, home(), concurrency, pool, check) as worker_:
        console.print(f"hemra worker: working {address} (pool {pool}) with concurrency {concurrency}", highlight=False)
        await _until_signalled(worker_)


async def _check_worker_token(store: transport.Client, address: str, token_env: str) -> None:
    """Exit with one line unless the store lets the token in as a worker's. Heartbeating no job
    changes nothing: the store answers that there is no such job once it let the call in."""
    try:
        await store.HeartbeatJob(spb.HeartbeatJobRequest())
    except errors.Unauthenticated:
        fail(f"the store at {address} refused the token in {token_env}")
    except errors.PermissionDenied as exc:
        fail(f"the store at {address} refused the token in {token_env} to a worker ({exc}): set HEMRA_WORKER_TOKEN")
    except errors.Unavailable as exc:
        fail(f"cannot reach the store at {address}: {exc}", 1)
    except (errors.NotFound, errors.LeaseLost):
        return


def health(
    address: Annotated[str, typer.Argument(help="A HEMRA service's HOST:PORT.")],
    service_name: Annotated[
        str, typer.Option("--service", help="One service's status (e.g. hemra.v1.StoreService); default: the server's.")
    ] = "",
) -> None:
    """Ask a service whether it is SERVING (exit 0) or not (exit 1): a container's healthcheck."""
    from hemra.services.common import probe

    check_address("ADDRESS", address)
    raise typer.Exit(probe.main([address, service_name] if service_name else [address]))
