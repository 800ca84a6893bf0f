"""A run's usage is summed as its events are written, on SQLite and PostgreSQL: by the queue's
append (a repeated batch adds nothing), by a restore (whatever the export claims), and by
migration 0011 for the events a store held before; reading it touches no event."""

import copy
import re

import pytest
from alembic import command
from sqlalchemy import text

from hemra.services.store import catalog, db, usage
from hemra.services.store.service import Store
from tests.store.test_hostile_restore import _manifest, _nop, _real_task
from tests.store.test_queue import FakeClock, plan


def _event(kind: str, payload: str) -> dict:
    return {"time": 1.0, "type": kind, "name": "turn", "payload": payload}


#: (events, their usage): the first key present wins; null passes to the next key; a string,
#: true, a negative, NaN or an absurd figure counts nothing (and never fails the append).
EVENTS = [
    _event("message", '{"input_tokens": 1000}'),  # not a usage event
    _event("usage", '{"input_tokens": 7, "output_tokens": 3}'),
    _event("usage", '{"prompt_tokens": 5, "cost_usd": 0.25}'),
    _event("usage", '{"input_tokens": null, "prompt_tokens": 2, "completion_tokens": 4, "cost": 0.5}'),
    _event("usage", '{"input_tokens": "9", "output_tokens": true, "total_cost": 1}'),
    _event("usage", "[1, 2]"),
    _event("usage", '{"input_tokens": 1e300, "output_tokens": -5, "cost_usd": 1e300}'),
    _event("usage", '{"input_tokens": 99999999999999999999999999, "cost_usd": NaN}'),
]
EXPECTED = usage.Usage(input_tokens=14, output_tokens=7, cost_usd=1.75, usage_events=7)


@pytest.fixture
async def store(database_url, tmp_path):
    store = await Store.open(database_url, tmp_path / "blobs", FakeClock())
    yield store
    await store.close()


def _totals(found) -> usage.Usage:
    [row] = found
    return usage.Usage(row.input_tokens, row.output_tokens, row.cost_usd, row.usage_events)


async def test_usage__summed_by_the_queue_append_and_a_repeated_batch_adds_nothing(store):
    run, _ = await store.record_run(plan(trials=2))
    claimed = await store.claim_job("w1", 30)
    job, token = claimed.job.id, claimed.job.lease_token
    assert await store.append_events(job, token, EVENTS[:3], first_seq=1) == 3
    assert await store.append_events(job, token, EVENTS[:3], first_seq=1) == 3  # the repeat
    assert await store.append_events(job, token, EVENTS[3:], first_seq=4) == len(EVENTS)
    assert _totals(await store.attempt_usage(run.id)) == EXPECTED  # one row: the other attempt has none
    assert usage.of_events(EVENTS) == EXPECTED


async def test_usage__read_from_the_attempts_alone(store):
    """The run's usage query names no events table in its plan, whatever the trace's size."""
    run, _ = await store.record_run(plan(trials=1))
    async with store.engine.connect() as conn:
        compiled = catalog.usage_query(run.id).compile(dialect=conn.dialect)
        values = tuple(compiled.construct_params()[name] for name in compiled.positiontup)
        explain = "EXPLAIN" if conn.dialect.name == "postgresql" else "EXPLAIN QUERY PLAN"
        explained = "\n".join(str(r[-1]) for r in (await conn.exec_driver_sql(f"{explain} {compiled}", values)).all())
    assert "attempts" in explained and not re.search(r"\bevents\b", explained), explained


async def test_usage__a_restore_sums_its_events_and_ignores_what_the_export_claims(store):
    rows = _manifest(await _real_task(store), _nop())
    [attempt] = rows["attempts"]
    attempt.update(input_tokens=10**12, cost_usd=99.0, usage_events=1, event_count=len(EVENTS))
    events = {attempt["id"]: [dict(seq=i + 1, duration=0.0, **e) for i, e in enumerate(EVENTS)]}
    run, _ = await store.restore_run(copy.deepcopy(rows), events)
    assert _totals(await store.attempt_usage(run.id)) == EXPECTED


#: Usage events the migration reads per batch (0011_attempt_usage.BATCH).
MIGRATION_BATCH = 10_000

OLD_ROWS = [
    "INSERT INTO datasets VALUES ('sha256:d', 'ds', '/x', '[]', 0)",
    "INSERT INTO harnesses VALUES ('sha256:h', 'h', '{}')",
    "INSERT INTO tasks VALUES ('sha256:t', 't', '{}')",
    "INSERT INTO runs (id, label, create_time, spec, concurrency, max_infra_retries, cancel_requested) "
    "VALUES ('r-1', 'old', 0, '{}', 1, 0, false)",
    "INSERT INTO cells (id, run_id, position, dataset_digest, dataset_name, harness_digest, harness_name, model) "
    "VALUES ('c-1', 'r-1', 0, 'sha256:d', 'ds', 'sha256:h', 'h', '')",
    "INSERT INTO trials (id, run_id, cell_id, task_digest, task_name, repetition) "
    "VALUES ('t-1', 'r-1', 'c-1', 'sha256:t', 't', 1)",
]


async def test_usage__migration_0011_sums_the_events_a_store_held(database_url):
    """A store at 0010 holding usage events gets their sums: three attempts, one with none, one
    with more usage events than a batch, so a batch ends inside an attempt's events."""
    db.ensure_sqlite_parent(database_url)
    engine = db.create_engine(database_url)
    async with engine.begin() as conn:
        await conn.run_sync(lambda c: command.upgrade(db._alembic_config(c), "0010"))
        for statement in OLD_ROWS:
            await conn.execute(text(statement))
        for attempt in ("a-1", "a-2", "a-3"):
            await conn.execute(
                text(
                    "INSERT INTO attempts (id, run_id, trial_id, number, state, exit_code, error, create_time, "
                    "agent_version, artifacts, event_count) VALUES (:id, 'r-1', 't-1', 1, 'finished', 0, '', 0, "
                    "'', '[]', 0)"
                ),
                {"id": attempt},
            )
        mine = [dict(a="a-1", s=i + 1, t=e["type"], p=e["payload"]) for i, e in enumerate(EVENTS)]
        many = [
            dict(a="a-2", s=i + 1, t="usage", p='{"input_tokens": 1, "cost_usd": 0.5}')
            for i in range(MIGRATION_BATCH + 5)
        ]
        await conn.execute(
            text(
                "INSERT INTO events (attempt_id, seq, time, type, name, payload, duration) "
                "VALUES (:a, :s, 0, :t, '', :p, 0)"
            ),
            mine + many,
        )
    await engine.dispose()
    await db.migrate(database_url)
    engine = db.create_engine(database_url)
    try:
        async with engine.connect() as conn:
            found = (await conn.execute(text(f"SELECT id, {', '.join(usage.COLUMNS)} FROM attempts ORDER BY id"))).all()
    finally:
        await engine.dispose()
    n = MIGRATION_BATCH + 5
    sums = {row.id: usage.Usage(*row[1:]) for row in found}
    assert sums == {"a-1": EXPECTED, "a-2": usage.Usage(n, 0, n * 0.5, n), "a-3": usage.Usage()}
