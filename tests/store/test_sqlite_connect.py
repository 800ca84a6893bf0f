"""Opening the SQLite store while another process writes to it."""

import asyncio
import sqlite3
import threading

from services.store import db


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
