"""Opening the SQLite store while another process writes to it."""

import asyncio
import sqlite3
import threading

from hemra.services.store import db


def test_connect__waits_for_a_writer_instead_of_failing_to_switch_to_wal(tmp_path):
    # A database not yet in WAL mode with a write under way (another `hemra` creating it):
    # switching the mode cannot wait on SQLite's busy handler, so connecting must retry.
    path = tmp_path / "hemra.db"
    writer = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    writer.execute("CREATE TABLE t (x)")
    writer.execute("BEGIN IMMEDIATE")
    writer.execute("INSERT INTO t VALUES (1)")
    threading.Timer(0.5, lambda: writer.execute("COMMIT")).start()

    async def journal_mode() -> str:
        engine = db.create_engine(db.sqlite_url(path))
        try:
            async with engine.connect() as connection:
                return (await connection.exec_driver_sql("PRAGMA journal_mode")).scalar()
        finally:
            await engine.dispose()

    assert asyncio.run(journal_mode()) == "wal"
    writer.close()


def test_reads__neither_wait_for_a_writer_nor_hold_one_up(tmp_path):
    # Reads begin deferred (db.reading): under WAL they read a snapshot while another
    # connection holds the write lock. Begun IMMEDIATE they queued for that lock, each loser
    # sleeping in SQLite's busy handler: seconds for some of a few concurrent dashboard reads.
    from sqlalchemy import text

    from hemra.services.store.service import Store

    async def main() -> None:
        store = await Store.open(f"sqlite:///{tmp_path / 'hemra.db'}", tmp_path / "blobs")
        writer = sqlite3.connect(tmp_path / "hemra.db", isolation_level=None, timeout=2)
        try:
            writer.execute("BEGIN IMMEDIATE")
            assert await asyncio.wait_for(store.list_runs(50, ""), 5) == ([], "")
            assert await asyncio.wait_for(store.list_datasets(), 5) == []
            writer.execute("ROLLBACK")
            async with store.reads() as session:  # a read open while a write goes through
                await session.execute(text("SELECT count(*) FROM runs"))
                writer.execute("BEGIN IMMEDIATE")
                writer.execute("ROLLBACK")
        finally:
            writer.close()
            await store.close()

    asyncio.run(main())
