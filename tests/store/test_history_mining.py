"""History mining in the store: counted as events are written (by the queue's append, on both
databases), counted per cell in the report and flagged, and listed with the matching events."""

import dataclasses
import json

import pytest

from hemra.services.store import completion, usage
from hemra.services.store.service import Store
from tests.store.test_queue import FakeClock, plan


def _event(kind: str, name: str, **payload) -> dict:
    return {"time": 1.0, "type": kind, "name": name, "payload": json.dumps(payload)}


#: A mining agent's events as the harness protocol records them: it reads the history of every
#: ref, shows a commit's file and writes it over its own.
MINER = [
    _event("message", "user", role="user", text="Fix the median."),
    _event("tool_call", "run_command", command="cat -n /app/stats_utils.py", exit_code=0),
    _event("tool_call", "run_command", command="cd /app && git log --all -p | head -50", exit_code=0),
    _event("message", "assistant", role="assistant", text="A later commit fixes it; git log --all found it."),
    _event("tool_call", "run_command", command="cd /app && git show 3f2a9c1d:stats_utils.py > stats_utils.py"),
    _event("tool_call", "run_command", command="cd /app && python3 -m pytest -q", exit_code=0),
]
#: The oracle's: its solution script, its output, its own git use (status, diff).
ORACLE = [
    _event("status", "harness_start"),
    _event("tool_call", "run_command", command="bash /solution/solve.sh", exit_code=0),
    _event("output", "stdout", text="git log --all would be cheating\n"),
    _event("tool_call", "run_command", command="cd /app && git status && git diff", exit_code=0),
]


@pytest.fixture
async def store(database_url, tmp_path):
    store = await Store.open(database_url, tmp_path / "blobs", FakeClock())
    yield store
    await store.close()


def _two_harnesses() -> dict:
    base = plan(trials=1, label="mining")
    return dataclasses.replace(
        base,
        harnesses=[
            dict(digest="sha256:h", harness_name="miner", record={}),
            dict(digest="sha256:o", harness_name="oracle", record={}),
        ],
        cells=[("sha256:d", "ds", "sha256:h", "miner", ""), ("sha256:d", "ds", "sha256:o", "oracle", "")],
        trials=[(0, "sha256:t", "task", 1, None), (1, "sha256:t", "task", 1, None)],
    )


async def _play(store: Store, events_by_harness: dict[str, list[dict]]) -> dict[str, str]:
    """Claim each job, append its harness's events in two batches, and finish it passed."""
    attempts = {}
    while (claimed := await store.claim_job("w1", 30)) is not None:
        harness = claimed.cell.harness_name
        events = events_by_harness[harness]
        job, token = claimed.job.id, claimed.job.lease_token
        await store.append_events(job, token, events[:3], first_seq=1)
        await store.append_events(job, token, events[3:], first_seq=4)
        score = {"state": "SCORE_STATE_SCORED", "rewards": {"reward": 1}}
        await store.complete_job(job, token, completion.Completion(outcome="OUTCOME_COMPLETED", score=score))
        attempts[harness] = claimed.attempt.id
    return attempts


async def test_mining__counted_flagged_and_listed_with_its_events(store):
    run, _ = await store.record_run(_two_harnesses())
    attempts = await _play(store, {"miner": MINER, "oracle": ORACLE})
    rows = {row.harness_name: row for row in (await store.run_report(run.id)).datasets[0].rows}
    assert (rows["miner"].history_mining, rows["oracle"].history_mining) == (1, 0)
    [flag] = [f for f in rows["miner"].flags if "mined repository history" in f]
    assert flag.startswith("1 of 1 attempts mined repository history (git log --all")
    assert not any("mined" in f for f in rows["oracle"].flags)
    found = await store.history_mining(run.label)
    [miner] = found.attempts
    assert (miner.attempt_id, miner.harness_name, miner.task_name, miner.latest) == (
        attempts["miner"],
        "miner",
        "task",
        True,
    )
    assert miner.mining_events == 2 and miner.patterns == ["git_log_all", "git_show_hash"]
    assert [(e.seq, e.pattern, e.possible) for e in miner.events] == [
        (3, "git_log_all", False),
        (5, "git_show_hash", True),
    ]
    assert miner.events[1].command == "git show 3f2a9c1d:stats_utils.py"
    assert not found.truncated


async def test_mining__the_report_of_a_settled_run_is_read_again_the_same(store):
    """A settled cell is kept (settled_cells) with its attempts' mining: a second report reads it."""
    run, _ = await store.record_run(_two_harnesses())
    await _play(store, {"miner": MINER, "oracle": ORACLE})
    first = await store.run_report(run.id)
    store._reports.clear()
    again = await store.run_report(run.id)
    assert [r.history_mining for r in again.datasets[0].rows] == [r.history_mining for r in first.datasets[0].rows]


def test_mining__counted_with_usage_in_one_pass():
    assert usage.of_events(MINER).mining_events == 2
    assert usage.of_events(ORACLE).mining_events == 0
    assert usage.of_events(MINER)  # a batch with mining adds to the row, even without usage


async def test_mining__migration_0017_counts_the_events_a_store_held(database_url):
    from alembic import command
    from sqlalchemy import text

    from hemra.services.store import db
    from tests.store.test_usage import OLD_ROWS

    db.ensure_sqlite_parent(database_url)
    engine = db.create_engine(database_url)
    async with engine.begin() as conn:
        await conn.run_sync(lambda c: command.upgrade(db._alembic_config(c), "0016"))
        for statement in OLD_ROWS:
            await conn.execute(text(statement))
        for attempt in ("a-1", "a-2"):
            await conn.execute(
                text(
                    "INSERT INTO attempts (id, run_id, trial_id, number, state, exit_code, error, create_time, "
                    "agent_version, artifacts, event_count) VALUES (:id, 'r-1', 't-1', 1, 'finished', 0, '', 0, "
                    "'', '[]', 0)"
                ),
                {"id": attempt},
            )
        rows = [dict(a="a-1", s=i + 1, t=e["type"], n=e["name"], p=e["payload"]) for i, e in enumerate(MINER)]
        rows += [dict(a="a-2", s=i + 1, t=e["type"], n=e["name"], p=e["payload"]) for i, e in enumerate(ORACLE)]
        await conn.execute(
            text(
                "INSERT INTO events (attempt_id, seq, time, type, name, payload, duration) "
                "VALUES (:a, :s, 0, :t, :n, :p, 0)"
            ),
            rows,
        )
    await engine.dispose()
    await db.migrate(database_url)
    engine = db.create_engine(database_url)
    try:
        async with engine.connect() as conn:
            found = dict((await conn.execute(text("SELECT id, mining_events FROM attempts"))).all())
    finally:
        await engine.dispose()
    assert found == {"a-1": 2, "a-2": 0}
