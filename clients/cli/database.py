"""hemra db: the store's schema. In a deployment `hemra db upgrade` alone migrates (a one-shot
job before the services roll); `hemra db wait` blocks until the schema is at head."""

import asyncio
import time
from typing import Annotated

import typer

from hemra.clients.cli.common import (
    EXIT_INCOMPLETE,
    check_address,
    check_seconds,
    command,
    console,
    database_url,
    fail,
    home,
)
from hemra.clients.cli.safe import plain

app = typer.Typer(help="The store's database schema: migrate it, or wait until it is current.", no_args_is_help=True)

DatabaseUrl = Annotated[
    str | None,
    typer.Option("--database-url", help="SQLAlchemy URL (default: HEMRA_DATABASE_URL, else HEMRA_HOME/hemra.db)."),
]


def _url(given: str | None) -> str:
    from hemra.services.store.settings import StoreSettings

    return StoreSettings.from_env(given or database_url(), home()).check().database_url


@app.command()
def upgrade(url: DatabaseUrl = None) -> None:
    """Migrate the schema to the newest version (nothing to do when it is there)."""
    _upgrade(url)


@command
async def _upgrade(given: str | None) -> None:
    from hemra.services.store import db

    url = _url(given)
    db.ensure_sqlite_parent(url)
    try:
        await db.migrate(url)
    except OSError as exc:
        fail(f"cannot reach the database: {exc}", EXIT_INCOMPLETE)
    state = await db.schema_state(url)
    if state:
        fail(state, EXIT_INCOMPLETE)
    console.print(plain(f"schema at head ({db.head_revision()})"), highlight=False)


@app.command()
def wait(
    url: DatabaseUrl = None,
    store: Annotated[
        str | None,
        typer.Option(
            "--store",
            help="Ask the store service at HOST:PORT instead of the database: it serves once the schema is at head.",
        ),
    ] = None,
    timeout: Annotated[float, typer.Option("--timeout", help="Give up after this many seconds (exit 1).")] = 300.0,
) -> None:
    """Block until the schema is at head (a deployment's services start after this)."""
    check_seconds("--timeout", timeout)
    if store is not None and url is not None:
        fail("give --database-url or --store, not both")
    if store is not None:
        _wait_for_store(check_address("--store", store), timeout)
    else:
        _wait(url, timeout)


@command
async def _wait(given: str | None, timeout: float) -> None:
    from hemra.services.store import db

    url = _url(given)
    deadline = time.monotonic() + timeout
    while state := await db.schema_state(url):
        if time.monotonic() >= deadline:
            fail(f"the schema is not at head after {timeout:g} s: {state}", EXIT_INCOMPLETE)
        await asyncio.sleep(1.0)
    console.print(plain(f"schema at head ({db.head_revision()})"), highlight=False)


#: The store's own service name in grpc.health.v1: SERVING once its schema is at head.
STORE_SERVICE = "hemra.v1.StoreService"


@command
async def _wait_for_store(address: str, timeout: float) -> None:
    """Services that hold no database credentials (and, under a NetworkPolicy, cannot reach
    the database) learn the schema's state from the store, which serves only at head."""
    from hemra.services.common import health

    deadline = time.monotonic() + timeout
    while True:
        status = await health.status(address, STORE_SERVICE, timeout=5)
        if status == "SERVING":
            break
        if time.monotonic() >= deadline:
            fail(f"the store at {address} is not serving after {timeout:g} s: {status}", EXIT_INCOMPLETE)
        await asyncio.sleep(1.0)
    console.print(plain(f"the store at {address} serves: schema at head"), highlight=False)
