"""A run's usage is summed from its `usage` events through the partial index ix_events_usage,
on SQLite and PostgreSQL: the plan of the real query names the index (on PostgreSQL with
sequential scans off, since a nearly empty table is cheaper to scan), and the sums are right."""

from sqlalchemy import text

from services.store import catalog
from services.store.service import Store
from tests.store.test_queue import FakeClock, plan


async def test_usage__summed_through_the_partial_index(database_url, tmp_path):
    store = await Store.open(database_url, tmp_path / "blobs", FakeClock())
    try:
        run, _ = await store.record_run(plan(trials=1))
        claimed = await store.claim_job("w1", 30)
        events = [
            {"time": 1.0, "type": "message", "name": "assistant", "payload": '{"text": "hi"}'},
            {"time": 2.0, "type": "usage", "name": "turn", "payload": '{"input_tokens": 7, "output_tokens": 3}'},
            {"time": 3.0, "type": "usage", "name": "turn", "payload": '{"prompt_tokens": 5, "cost_usd": 0.25}'},
        ]
        await store.append_events(claimed.job.id, claimed.job.lease_token, events)
        [usage] = await store.attempt_usage(run.id)
        assert (usage.input_tokens, usage.output_tokens, usage.cost_usd, usage.usage_events) == (12, 3, 0.25, 2)
        async with store.engine.connect() as conn:
            dialect = conn.dialect.name
            # As the driver gets it: the run's ID a bound parameter, the rest as compiled.
            compiled = catalog.usage_query(dialect, run.id).compile(dialect=conn.dialect)
            params = compiled.construct_params()
            values = tuple(params[name] for name in compiled.positiontup)
            if dialect == "postgresql":
                await conn.execute(text("SET enable_seqscan = off"))
            explain = "EXPLAIN" if dialect == "postgresql" else "EXPLAIN QUERY PLAN"
            plan_rows = (await conn.exec_driver_sql(f"{explain} {compiled}", values)).all()
            explained = "\n".join(str(row[-1]) for row in plan_rows)
        assert "ix_events_usage" in explained, explained
    finally:
        await store.close()
