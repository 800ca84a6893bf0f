"""The Alembic migrations build exactly the schema tables.py declares, on both databases."""

import asyncio

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext

from hemra.services.store import db
from hemra.services.store.tables import Base


async def test_migrations__match_the_tables(database_url):
    db.ensure_sqlite_parent(database_url)
    await db.migrate(database_url)
    await db.migrate(database_url)  # a second upgrade is a no-op
    engine = db.create_engine(database_url)
    try:
        async with engine.connect() as conn:
            diff = await conn.run_sync(lambda c: compare_metadata(MigrationContext.configure(c), Base.metadata))
    finally:
        await engine.dispose()
    assert diff == []


async def test_migrations__upgrade_a_store_holding_data_from_the_first_schema(database_url, tmp_path):
    """A store written by the first release keeps its runs through every later migration."""
    from alembic import command
    from sqlalchemy import text

    db.ensure_sqlite_parent(database_url)
    engine = db.create_engine(database_url, foreign_keys=False)
    async with engine.begin() as conn:
        await conn.run_sync(lambda c: command.upgrade(db._alembic_config(c), "0001"))
        await conn.execute(text("INSERT INTO datasets VALUES ('sha256:d', 'ds', '/x', '[]', 0)"))
        await conn.execute(text("INSERT INTO harnesses VALUES ('sha256:h', 'h', '{}')"))
        await conn.execute(text("INSERT INTO tasks VALUES ('sha256:t', 't', '{}')"))
        await conn.execute(text("INSERT INTO runs VALUES ('r-0000000000aaaaaa', 'old', 0, '{}', 2, 0, false)"))
        await conn.execute(
            text("INSERT INTO cells VALUES ('c-1', 'r-0000000000aaaaaa', 0, 'sha256:d', 'ds', 'sha256:h', 'h', '')")
        )
        await conn.execute(text("INSERT INTO trials VALUES ('t-1', 'r-0000000000aaaaaa', 'c-1', 'sha256:t', 't', 1)"))
        await conn.execute(
            text(
                "INSERT INTO attempts (id, run_id, trial_id, number, state, exit_code, error, "
                "create_time, agent_version, artifacts, event_count) VALUES ('a-1', "
                "'r-0000000000aaaaaa', 't-1', 1, 'running', 0, '', 0, '', '[]', 0)"
            )
        )
        await conn.execute(
            text("INSERT INTO jobs VALUES ('j-1', 'r-0000000000aaaaaa', 'a-1', 'leased', 'w', 1, 0, 1, '', 0)")
        )
    await engine.dispose()
    await db.migrate(database_url)
    engine = db.create_engine(database_url)
    try:
        async with engine.connect() as conn:
            row = (await conn.execute(text("SELECT label, kind, leased, limited FROM runs"))).one()
            attempt = (await conn.execute(text("SELECT state, released FROM attempts"))).one()
    finally:
        await engine.dispose()
    assert (row.label, row.kind, row.leased) == ("old", "run", 1) and bool(row.limited)
    assert (attempt.state, bool(attempt.released)) == ("running", False)


@pytest.mark.postgres
async def test_migrations__commands_started_at_once_on_a_fresh_database_all_succeed(postgres_url):
    """Several processes opening a fresh PostgreSQL database at once (a `hemra run` and the
    `hemra show`s polling it): one migrates, the others wait for it, none fails."""
    await asyncio.gather(*(db.migrate(postgres_url) for _ in range(4)))
    engine = db.create_engine(postgres_url)
    try:
        async with engine.connect() as conn:
            state, newer = await conn.run_sync(db._schema)
        assert (state, newer) == ("", False)
    finally:
        await engine.dispose()
