"""The Alembic migrations build exactly the schema tables.py declares, on both databases."""

import asyncio

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import inspect

from hemra.services.store import db
from hemra.services.store.tables import Base
from tests.conftest import new_postgres_database


@pytest.fixture
def another_database_url(database_url, tmp_path):
    """A second empty database of database_url's kind."""
    if database_url.startswith("sqlite"):
        yield f"sqlite:///{tmp_path / 'another.db'}"
        return
    with new_postgres_database(database_url) as url:
        yield url


async def _upgrade_one_migration_at_a_time(url: str) -> None:
    from alembic import command

    engine = db.create_engine(url, foreign_keys=False)
    try:
        async with engine.begin() as conn:
            await conn.run_sync(lambda c: command.upgrade(db._alembic_config(c), "head"))
    finally:
        await engine.dispose()


async def _read(url: str, read):
    engine = db.create_engine(url)
    try:
        async with engine.connect() as conn:
            return await conn.run_sync(read)
    finally:
        await engine.dispose()


def _schema_of(connection) -> dict:
    """Everything the database says of each table: columns (with types, nullability and server
    defaults), primary key, foreign keys, indexes, unique and check constraints; and the
    recorded migration. Column order is left out: a migration adds a column last."""
    inspector = inspect(connection)
    tables = {}
    for table in inspector.get_table_names():
        columns = sorted(
            (c["name"], str(c["type"]), c["nullable"], str(c["default"])) for c in inspector.get_columns(table)
        )
        foreign_keys = sorted(
            (tuple(fk["constrained_columns"]), fk["referred_table"], tuple(fk["referred_columns"]), str(fk["options"]))
            for fk in inspector.get_foreign_keys(table)
        )
        indexes = sorted((i["name"], tuple(i["column_names"]), i["unique"]) for i in inspector.get_indexes(table))
        uniques = sorted(tuple(u["column_names"]) for u in inspector.get_unique_constraints(table))
        checks = sorted(c["sqltext"] for c in inspector.get_check_constraints(table))
        primary_key = inspector.get_pk_constraint(table)["constrained_columns"]
        tables[table] = (columns, primary_key, foreign_keys, indexes, uniques, checks)
    version = connection.exec_driver_sql("SELECT version_num FROM alembic_version").scalars().all()
    return {"tables": tables, "version": version}


async def test_migrations__match_the_tables(database_url):
    db.ensure_sqlite_parent(database_url)
    await _upgrade_one_migration_at_a_time(database_url)
    await db.migrate(database_url)  # a second upgrade is a no-op
    diff = await _read(database_url, lambda c: compare_metadata(MigrationContext.configure(c), Base.metadata))
    assert diff == []


async def test_migrations__a_new_store_is_made_in_one_step_exactly_as_every_migration_makes_it(
    database_url, another_database_url
):
    """An empty database gets the newest schema at once (db._create_newest): the same tables,
    columns, defaults, keys, indexes and constraints as every migration in turn builds, and
    the same recorded migration, so later migrations apply to it as to any store."""
    for url in (database_url, another_database_url):
        db.ensure_sqlite_parent(url)
    await _upgrade_one_migration_at_a_time(database_url)
    await db.migrate(another_database_url)
    migrated, created = await _read(database_url, _schema_of), await _read(another_database_url, _schema_of)
    assert created["version"] == [db.head_revision()]
    assert set(created["tables"]) == set(migrated["tables"])
    for table, shape in migrated["tables"].items():
        assert created["tables"][table] == shape, table
    assert created == migrated


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
