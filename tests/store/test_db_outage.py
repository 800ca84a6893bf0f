"""A database that went away is UNAVAILABLE (callers retry), never INTERNAL; other errors stay
what they are. The compose stack's PostgreSQL restart test (tests/deploy) relies on this."""

import sqlite3

import asyncpg
import pytest
from sqlalchemy.exc import OperationalError

from services.common.errors import Unavailable
from services.store.db import as_outage


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
    from hemra.v1 import store_service_pb2 as spb
    from services.common import errors, transport
    from services.store.server import build_server
    from services.store.service import Store

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
