"""Where a command's services are: embedded in this process (the default), or a deployment
reached through its gateway's front door (HEMRA_SERVER, or --server). Through a server no
command opens a database: everything travels over the front door, authenticated with the
user's token (HEMRA_TOKEN: the first, while two are given during a rotation), and local
folders a command names are sent as blobs. A deployment's services that are away for a while
(a store restarting) are waited for, up to HEMRA_CLIENT_RIDE_OUT seconds, by every call that
may be repeated safely."""

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import grpc

from hemra.clients.cli.common import EXIT_USAGE, database_url, err_console, fail, home
from hemra.clients.cli.safe import plain
from hemra.services.common import auth, errors, transport
from hemra.v1 import store_service_pb2 as spb

SERVER_ENV = "HEMRA_SERVER"
TOKEN_ENV = "HEMRA_TOKEN"
TOKEN_FILE_ENV = "HEMRA_TOKEN_FILE"
CA_ENV = "HEMRA_TLS_CA"
RIDE_OUT_ENV = "HEMRA_CLIENT_RIDE_OUT"
#: How long a call waits, by default, for a deployment's service that is unavailable: longer
#: than a store or database restart takes.
DEFAULT_RIDE_OUT = 300.0
#: Set by the --server option (it wins over HEMRA_SERVER).
server_option: str | None = None


def server_url() -> str:
    return server_option or os.environ.get(SERVER_ENV, "")


@dataclass
class Remote:
    """A deployment's services as the CLI uses them, over one channel to its front door."""

    url: str
    store: transport.Client
    planner: transport.Client
    importer: transport.Client
    scorer: transport.Client
    remote = True


@dataclass
class Warm:
    """The store a read command found kept warm on this machine (services/store/warm.py)."""

    store: transport.Client
    remote = False


@contextlib.asynccontextmanager
async def services(store_only: bool = False, read_only: bool = False):
    """The services a command talks to, for the length of the `async with`. `store_only`: the
    command uses the store and nothing else, so on one machine only the store is started.
    `read_only` (store only, and it writes nothing): on one machine a warm store serves it
    when there is one, and one is left warm for the next command otherwise."""
    url = server_url()
    if not url:
        if read_only:
            async with _read_locally() as local:
                yield local
            return
        from hemra.services.compose import embedded

        only = ("store",) if store_only else embedded.SERVICES
        async with embedded.services(home(), database_url(), only=only) as local:
            yield local
        return
    address, tls = _address(url)
    channel = _channel(address, tls)
    token = _token()
    window = ride_out()
    outage = transport.Outage(lambda line: err_console.print(plain(line), highlight=False, soft_wrap=True), window)
    try:
        # The first call does not wait: a wrong address or token is one line at once.
        await _check(url, transport.store(channel, token))
        yield Remote(
            url,
            transport.store(channel, token, ride_out=window, outage=outage),
            transport.planner(channel, token, ride_out=window, outage=outage),
            transport.importer(channel, token, ride_out=window, outage=outage),
            transport.scorer(channel, token, ride_out=window, outage=outage),
        )
    finally:
        await channel.close()


@contextlib.asynccontextmanager
async def _read_locally():
    from hemra.services.compose import embedded
    from hemra.services.store import warm
    from hemra.services.store.settings import StoreSettings

    where = home()
    settings = StoreSettings.from_env(database_url(), where)
    keep = warm.idle_secs() > 0 and warm.eligible(settings.database_url)
    found = keep and warm.find(where, settings.database_url, settings.blob_dir)
    if found:
        channel = transport.channel(found.address)
        try:
            if await _answers(transport.store(channel, found.token, retries=1)):
                yield Warm(transport.store(channel, found.token))
                return
        finally:
            await channel.close()
    async with embedded.services(where, database_url(), only=("store",)) as local:
        yield local
    if keep:
        warm.start(where, settings.database_url)


async def _answers(store: transport.Client) -> bool:
    """Whether a warm store answers at once (it may have just exited, or be busy starting):
    else the command opens the store itself."""
    try:
        await _hello(store, timeout=2)
    except errors.HemraError:
        return False
    return True


async def _hello(store: transport.Client, timeout: float) -> None:
    """An authenticated call that reads no table (asking which of no blobs are missing): a
    first call that listed runs would count the latest run's trials, 0.2 s for 50,000."""
    await store.FindMissingBlobs(spb.FindMissingBlobsRequest(), timeout=timeout)


def _address(url: str) -> tuple[str, bool]:
    """HOST:PORT and whether TLS is used, from http(s)://HOST:PORT."""
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        port = None
    if parts.scheme not in ("http", "https") or not parts.hostname or port is None or parts.path not in ("", "/"):
        fail(f"{SERVER_ENV} (or --server) must be https://HOST:PORT or http://HOST:PORT, not {url!r}")
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    return f"{host}:{port}", parts.scheme == "https"


def _channel(address: str, tls: bool) -> grpc.aio.Channel:
    if not tls:
        return transport.channel(address)
    ca = os.environ.get(CA_ENV)
    if ca:
        try:
            return transport.channel(address, Path(ca).read_bytes())
        except OSError as exc:
            fail(f"{CA_ENV}={ca}: cannot read it: {exc.strerror or exc}")
    return grpc.aio.secure_channel(address, grpc.ssl_channel_credentials(), options=transport.CHANNEL_OPTIONS)


def _token() -> str:
    """HEMRA_TOKEN, else the file HEMRA_TOKEN_FILE names (as the services read it), else HEMRA_HOME/token.
    Of two (a rotation), the first is sent."""
    try:
        return auth.token_from_env(TOKEN_ENV)
    except auth.TokenError as exc:
        if os.environ.get(TOKEN_FILE_ENV):  # named, but unreadable or empty: say so
            fail(str(exc))
    try:
        value = (home() / "token").read_text().strip()
    except OSError:
        value = ""
    if not value:
        fail(f"a server needs the deployment token: set {TOKEN_ENV}, or {TOKEN_FILE_ENV} to a file holding it")
    return value


def ride_out() -> float:
    """HEMRA_CLIENT_RIDE_OUT: seconds a call waits for an unavailable service (0: a few quick
    retries only); DEFAULT_RIDE_OUT when unset."""
    value = os.environ.get(RIDE_OUT_ENV, "").strip()
    if not value:
        return DEFAULT_RIDE_OUT
    try:
        secs = float(value)
    except ValueError:
        secs = -1.0
    if not 0 <= secs <= 7 * 24 * 3600:  # NaN too
        fail(f"{RIDE_OUT_ENV}={value[:40]!r}: expected a number of seconds from 0 to 604800")
    return secs


async def _check(url: str, store: transport.Client) -> None:
    """One cheap call first, so a wrong address or token is one line, not a failure mid-command."""
    try:
        await _hello(store, timeout=10)
    except errors.Unauthenticated:
        fail(f"the server at {url} refused the token (check {TOKEN_ENV} or {TOKEN_FILE_ENV})")
    except (errors.Unavailable, errors.DeadlineExceeded) as exc:
        fail(f"cannot reach the HEMRA server at {url}: {exc}", EXIT_USAGE)
