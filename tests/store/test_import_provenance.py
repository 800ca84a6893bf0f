"""Imports say so: migration 0018 turns the restored exports a store already holds (kind "run",
attempts but no job) into the imports they are, and keeps every import's time; a run HEMRA
executed, and an import, stay as they were. On SQLite and PostgreSQL."""

from alembic import command
from sqlalchemy import text

from hemra.services.store import db

RESTORED, EXECUTED, EMPTY, HARBOR = "r-0000000000aaaaaa", "r-0000000000bbbbbb", "r-0000000000cccccc", "i-0000000000dddd"


async def _rows_at_0017(conn) -> None:
    await conn.execute(text("INSERT INTO datasets VALUES ('sha256:d', 'ds', '/x', '[]', 0)"))
    await conn.execute(text("INSERT INTO harnesses VALUES ('sha256:h', 'h', '{}')"))
    await conn.execute(text("INSERT INTO tasks VALUES ('sha256:t', 't', '{}')"))
    for n, (run_id, kind) in enumerate(((RESTORED, "run"), (EXECUTED, "run"), (EMPTY, "run"), (HARBOR, "import"))):
        await conn.execute(
            text(
                "INSERT INTO runs (id, label, create_time, spec, concurrency, max_infra_retries, cancel_requested, "
                "kind) VALUES (:id, :label, :time, '{}', 1, 0, false, :kind)"
            ),
            dict(id=run_id, label=f"label-{n}", time=1_700_000_000.0 + n, kind=kind),
        )
        await conn.execute(
            text(
                "INSERT INTO cells (id, run_id, position, dataset_digest, dataset_name, harness_digest, "
                "harness_name, model) VALUES (:id, :run, 0, 'sha256:d', 'ds', 'sha256:h', 'h', '')"
            ),
            dict(id=f"c-{n}", run=run_id),
        )
        if run_id == EMPTY:
            continue
        await conn.execute(
            text("INSERT INTO trials VALUES (:id, :run, :cell, 'sha256:t', 't', 1)"),
            dict(id=f"t-{n}", run=run_id, cell=f"c-{n}"),
        )
        await conn.execute(
            text(
                "INSERT INTO attempts (id, run_id, trial_id, number, state, exit_code, error, create_time, "
                "agent_version, artifacts, event_count) VALUES (:id, :run, :trial, 1, 'finished', 0, '', 0, '', "
                "'[]', 0)"
            ),
            dict(id=f"a-{n}", run=run_id, trial=f"t-{n}"),
        )
    await conn.execute(
        text(
            "INSERT INTO jobs (id, run_id, attempt_id, state, lease_owner, lease_token, lease_expire_time, "
            "try_count, last_error, create_time) VALUES ('j-1', :run, 'a-1', 'done', '', 1, 0, 1, '', 0)"
        ),
        dict(run=EXECUTED),
    )


async def test_migration_0018__restored_exports_become_imports_and_runs_stay_runs(database_url):
    db.ensure_sqlite_parent(database_url)
    engine = db.create_engine(database_url, foreign_keys=False)
    async with engine.begin() as conn:
        await conn.run_sync(lambda c: command.upgrade(db._alembic_config(c), "0017"))
        await _rows_at_0017(conn)
    await engine.dispose()
    await db.migrate(database_url)
    engine = db.create_engine(database_url)
    try:
        async with engine.connect() as conn:
            found = {
                row.id: row
                for row in await conn.execute(
                    text(
                        "SELECT id, kind, import_format, import_time, original_id, original_kind, original_label, "
                        "imported_by, export_digest FROM runs"
                    )
                )
            }
    finally:
        await engine.dispose()
    restored = found[RESTORED]
    assert (restored.kind, restored.import_format) == ("import", "hemra-export 1")
    assert (restored.original_id, restored.original_kind, restored.original_label) == (RESTORED, "run", "label-0")
    assert (restored.import_time, restored.imported_by, restored.export_digest) == (None, "", "")
    for run_id in (EXECUTED, EMPTY):
        assert (found[run_id].kind, found[run_id].original_kind, found[run_id].import_time) == ("run", "", None)
    assert (found[HARBOR].kind, found[HARBOR].import_time, found[HARBOR].original_kind) == (
        "import",
        1_700_000_003.0,
        "",
    )
