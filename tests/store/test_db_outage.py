"""A database that went away is UNAVAILABLE (callers retry), never INTERNAL; other errors stay
what they are. The compose stack's PostgreSQL restart test (tests/deploy) relies on this."""

import asyncio
import sqlite3

import asyncpg
import pytest
from sqlalchemy.exc import OperationalError

from hemra.services.common.errors import Unavailable
from hemra.services.store.db import as_outage


@pytest.mark.parametrize(
    "exc",
    [
        ConnectionRefusedError(111, "Connection refused"),
        asyncpg.ConnectionDoesNotExistError("connection was closed in the middle of operation"),
        asyncpg.InterfaceError("connection is closed"),
    ],
)
def test_a_lost_connection_is_unavailable(exc):
    translated = as_outage(exc)
    assert isinstance(translated, Unavailable)
    assert str(translated).startswith(f"the database is unavailable: {type(exc).__name__}")


def test_sqlite_errors_and_bugs_are_left_as_they_are():
    locked = OperationalError("SELECT 1", {}, sqlite3.OperationalError("no such table: runs"))
    assert as_outage(locked) is locked
    bug = ValueError("a bug")
    assert as_outage(bug) is bug


async def test_store_rpc_answers_unavailable_when_postgres_is_gone(tmp_path):
    """A real store server whose PostgreSQL does not answer: its calls are UNAVAILABLE."""
    from hemra.services.common import errors, transport
    from hemra.services.store.server import build_server
    from hemra.services.store.service import Store
    from hemra.v1 import store_service_pb2 as spb

    store = await Store.open("postgresql://nobody@127.0.0.1:1/none", tmp_path / "blobs", migrate=False)
    server, port = build_server(store, "127.0.0.1:0")
    await transport.start(server)
    channel = transport.channel(f"127.0.0.1:{port}")
    try:
        client = transport.Client(channel, transport.store(channel)._stub, timeout=10, retries=1)
        with pytest.raises(errors.Unavailable, match="the database is unavailable"):
            await client.GetRun(spb.GetRunRequest(run="r-0"))
    finally:
        await channel.close()
        await transport.stop(server, grace=None)
        await store.close()


async def test_a_server_shutting_down_is_unavailable_in_either_driver(postgres_url):
    """The server's own errors of class 57 ("terminating connection due to administrator
    command", "the database system is shutting down"), as asyncpg raises them (the queue's
    pool) and as SQLAlchemy wraps them: a PostgreSQL restart, which executors ride out."""
    from sqlalchemy import text

    from hemra.services.store.db import asyncpg_dsn, create_engine, normalize_url

    async def terminated(run_query) -> Exception:
        admin = await asyncpg.connect(asyncpg_dsn(normalize_url(postgres_url)))
        try:
            task = asyncio.ensure_future(run_query())
            await asyncio.sleep(0.5)
            await admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE query LIKE 'SELECT pg_sleep(30)%' AND pid <> pg_backend_pid()"
            )
            with pytest.raises(Exception) as info:
                await asyncio.wait_for(task, 20)
            return info.value
        finally:
            await admin.close()

    async def raw() -> None:
        conn = await asyncpg.connect(asyncpg_dsn(normalize_url(postgres_url)))
        try:
            await conn.execute("SELECT pg_sleep(30)")
        finally:
            await conn.close()

    async def wrapped() -> None:
        engine = create_engine(postgres_url)
        try:
            async with engine.connect() as conn:
                await conn.execute(text("SELECT pg_sleep(30)"))
        finally:
            await engine.dispose()

    for run_query in (raw, wrapped):
        exc = await terminated(run_query)
        assert "administrator command" in str(exc)
        translated = as_outage(exc)
        assert isinstance(translated, Unavailable), (type(exc), exc)
    bad_sql = asyncpg.exceptions.UndefinedTableError('relation "nope" does not exist')
    assert as_outage(bad_sql) is bad_sql  # a statement's error stays a bug


def test_the_database_system_is_shutting_down_is_unavailable():
    """What a store met in the compose stack's PostgreSQL restart: a new connection refused
    with 57P03, raised by asyncpg and wrapped by SQLAlchemy in a plain DBAPIError whose
    connection is not marked invalidated. It was INTERNAL, and the executor's attempt an
    infrastructure failure."""
    from sqlalchemy.dialects.postgresql.asyncpg import AsyncAdapt_asyncpg_dbapi
    from sqlalchemy.exc import DBAPIError

    refused = asyncpg.exceptions.CannotConnectNowError("the database system is shutting down")
    adapted = AsyncAdapt_asyncpg_dbapi(asyncpg).Error("the database system is shutting down", refused)
    adapted.__cause__ = refused
    wrapped = DBAPIError("SELECT 1", {}, adapted)
    assert not wrapped.connection_invalidated
    for exc in (refused, wrapped):
        translated = as_outage(exc)
        assert isinstance(translated, Unavailable), exc
        assert "the database system is shutting down" in str(translated)


async def test_the_queues_pool_never_hands_out_a_connection_its_statement_left_unfinished(postgres_url):
    """The hot path's pool (pgqueue.FastQueue, one connection here) after a statement cancelled
    mid-flight (its caller's deadline) and one whose backend was terminated (a PostgreSQL
    restart): the next statements run, on a connection the pool opened anew, and a statement's
    own error leaves the connection in use."""
    from hemra.services.store.db import asyncpg_dsn, normalize_url
    from hemra.services.store.pgqueue import FastQueue

    dsn = asyncpg_dsn(normalize_url(postgres_url))
    fast = FastQueue(dsn, max_size=1)
    admin = await asyncpg.connect(dsn)
    try:
        first = await fast._fetchrow("SELECT pg_backend_pid() AS pid")
        cancelled = asyncio.ensure_future(fast._fetchrow("SELECT pg_sleep(30)"))
        await asyncio.sleep(0.3)
        cancelled.cancel()
        with pytest.raises(asyncio.CancelledError):
            await cancelled
        second = await asyncio.wait_for(fast._fetchrow("SELECT pg_backend_pid() AS pid"), 10)
        assert second["pid"] != first["pid"]  # the interrupted connection was closed, not reused

        cut = asyncio.ensure_future(fast._fetchrow("SELECT pg_sleep(30)"))
        await asyncio.sleep(0.3)
        await admin.execute("SELECT pg_terminate_backend($1)", second["pid"])
        with pytest.raises(Unavailable, match="the database is unavailable"):
            await asyncio.wait_for(cut, 20)
        third = await asyncio.wait_for(fast._fetchrow("SELECT pg_backend_pid() AS pid"), 10)
        assert third["pid"] not in (first["pid"], second["pid"])

        with pytest.raises(asyncpg.exceptions.UndefinedTableError):
            await fast._fetchrow("SELECT * FROM no_such_table")
        assert (await fast._fetchrow("SELECT pg_backend_pid() AS pid"))["pid"] == third["pid"]
    finally:
        await admin.close()
        await fast.close()
