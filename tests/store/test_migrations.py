"""The Alembic migrations build exactly the schema tables.py declares, on both databases."""

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext

from services.store import db
from services.store.tables import Base


async def test_migrations__match_the_tables(database_url):
    engine = db.create_engine(database_url)
    db.ensure_sqlite_parent(database_url)
    try:
        await db.migrate(engine)
        await db.migrate(engine)  # a second upgrade is a no-op
        async with engine.connect() as conn:
            diff = await conn.run_sync(lambda c: compare_metadata(MigrationContext.configure(c), Base.metadata))
    finally:
        await engine.dispose()
    assert diff == []
