"""Resume and repair in the store, on SQLite and PostgreSQL: which trials are queued again, what
is recorded, the report before and after, and two repairs at once queueing each trial once."""

import asyncio

import pytest
from sqlalchemy import func, select

from hemra.services.common.errors import FailedPrecondition, InvalidArgument
from hemra.services.store import completion, db
from hemra.services.store import tables as t
from hemra.services.store.service import Store
from tests.store.test_queue import FakeClock, plan

SCORED = {"state": "SCORE_STATE_SCORED", "rewards": {"reward": 1.0}}
SCORED_ZERO = {"state": "SCORE_STATE_SCORED", "rewards": {"reward": 0.0}}
UNSCORED = {"state": "SCORE_STATE_FAILED", "error": "the scorer service failed"}


@pytest.fixture
async def store(database_url, tmp_path):
    store = await Store.open(database_url, tmp_path / "blobs", FakeClock())
    yield store
    await store.close()


async def _finish(store: Store, outcomes: list[tuple[str, dict | None]]) -> None:
    """Work the queue once: the n-th claimed trial ends as outcomes[n] says."""
    for outcome, score in outcomes:
        claimed = await store.claim_job("w1", 30)
        done = completion.Completion(outcome, score=score, error="boom" if outcome == "infra_failed" else "")
        await store.complete_job(claimed.job.id, claimed.job.lease_token, done)


async def _finished_run(store: Store):
    """Five trials: passed, failed by its agent, an infrastructure failure, a scorer failure,
    a harness failure that was scored."""
    run, _ = await store.record_run(plan(trials=5))
    await _finish(
        store,
        [
            ("completed", SCORED),
            ("completed", SCORED_ZERO),
            ("infra_failed", None),
            ("completed", UNSCORED),
            ("harness_failed", SCORED_ZERO),
        ],
    )
    return run


async def _attempts_per_trial(store: Store, run_id: str) -> dict[int, int]:
    async with store.sessions() as session:
        rows = await session.execute(
            select(t.Trial.repetition, func.count())
            .join(t.Attempt, t.Attempt.trial_id == t.Trial.id)
            .where(t.Trial.run_id == run_id)
            .group_by(t.Trial.repetition)
        )
        return dict(rows.all())


async def test_repair__queues_only_unscored_trials(store):
    run = await _finished_run(store)
    before = await store.run_report(run.id)
    assert before.trials_by_attempts == {1: 5} and before.repairs == [] and not before.complete

    _, _, progress, done = await store.requeue(run.id, "repair", [], False, "alice@laptop", [])
    assert sorted((r.repetition, r.reason) for r in done.trials) == [(3, "infra"), (4, "scorer")]
    assert progress[0]["queued"] == 2
    assert await _attempts_per_trial(store, run.id) == {1: 1, 2: 1, 3: 2, 4: 2, 5: 1}

    # A second repair while they are queued queues nothing.
    _, _, _, again = await store.requeue(run.id, "repair", [], False, "alice@laptop", [])
    assert again.trials == [] and again.already_queued == 2 and again.repair is None

    await _finish(store, [("completed", SCORED), ("completed", SCORED_ZERO)])
    after = await store.run_report(run.id)
    assert after.complete and after.trials_by_attempts == {1: 3, 2: 2}
    [repair] = after.repairs
    assert (repair.kind, repair.requested_by, repair.queued, repair.reasons) == (
        "repair",
        "alice@laptop",
        2,
        ["infra", "scorer", "cancelled"],  # as asked (none: all three)
    )
    assert not after.unfair
    row = after.datasets[0].rows[0]
    assert (row.passed, row.graded, row.infra_failed, row.scorer_failed) == (2, 5, 0, 0)


async def test_repair__only_the_reasons_asked(store):
    run = await _finished_run(store)
    _, _, _, done = await store.requeue(run.id, "repair", ["scorer"], False, "", [])
    assert [r.repetition for r in done.trials] == [4]
    with pytest.raises(InvalidArgument, match="repair reason 'agent'"):
        await store.requeue(run.id, "repair", ["agent"], False, "", [])


async def test_repair__dry_run_records_nothing_and_prices_from_usage(store):
    run = await _finished_run(store)
    async with store.sessions.begin() as session:  # usage as the usage events would sum it
        await session.execute(t.Attempt.__table__.update().values(cost_usd=0.5, usage_events=1))
    _, _, progress, done = await store.requeue(run.id, "repair", [], True, "", [])
    assert len(done.trials) == 2 and done.cost_known == 2 and done.expected_cost_usd == pytest.approx(1.0)
    assert progress[0]["queued"] == 0 and done.repair is None
    assert await _attempts_per_trial(store, run.id) == dict.fromkeys(range(1, 6), 1)


async def test_repair__allowed_change_is_recorded_and_flags_the_report(store):
    run = await _finished_run(store)
    change = dict(what="dataset ds", pinned="sha256:d", current="sha256:e")
    await store.requeue(run.id, "repair", ["infra"], False, "", [change])
    report = await store.run_report(run.id)
    assert report.unfair and report.repairs[0].allowed_changes[0].current == "sha256:e"


async def test_resume__cancelled_and_dead_workers_queued_again_scored_untouched(store):
    run, _ = await store.record_run(plan(trials=4, retries=0))
    await _finish(store, [("completed", SCORED)])
    await store.claim_job("dies", 30)  # its worker dies: the lease runs out
    await store.cancel_run(run.id)  # the other two are cancelled before they start
    store.clock.now += 60

    _, _, progress, dry = await store.requeue(run.id, "resume", [], True, "", [])
    assert len(dry.trials) == 2 and dry.still_running == 1  # the dead lease is seen, not closed, in a dry run
    run_now, _, progress, done = await store.requeue(run.id, "resume", [], False, "bob", [])
    assert sorted((r.repetition, r.reason) for r in done.trials) == [(2, "infra"), (3, "cancelled"), (4, "cancelled")]
    assert progress[0]["queued"] == 3 and not run_now.cancel_requested
    await _finish(store, [("completed", SCORED), ("completed", SCORED_ZERO), ("completed", SCORED)])
    assert await store.claim_job("w1", 30) is None
    report = await store.run_report(run.id)
    row = report.datasets[0].rows[0]
    assert report.complete and row.trials == 4 and row.graded == 4 and row.passed == 3
    assert report.trials_by_attempts == {1: 1, 2: 3}
    assert [r.kind for r in report.repairs] == ["resume"]


async def test_resume__an_infra_failure_of_its_own_is_left_to_repair(store):
    run, _ = await store.record_run(plan(trials=1))
    await _finish(store, [("infra_failed", None)])
    _, _, _, done = await store.requeue(run.id, "resume", [], False, "", [])
    assert done.trials == []
    _, _, _, done = await store.requeue(run.id, "repair", ["infra"], False, "", [])
    assert len(done.trials) == 1


async def test_repair__an_import_is_refused(store):
    run, _ = await store.record_run(plan(trials=1))
    async with store.sessions.begin() as session:
        await session.execute(t.Run.__table__.update().values(kind="import"))
    with pytest.raises(FailedPrecondition, match="is an import"):
        await store.requeue(run.id, "repair", [], False, "", [])


async def test_repair__two_at_once_queue_each_trial_once(database_url, tmp_path):
    """Two store processes' worth of connections (two Stores on one database) repair the same
    run at the same instant, many times over: each unscored trial gets one new attempt."""
    first = await Store.open(database_url, tmp_path / "blobs", FakeClock())
    second = Store(db.create_engine(database_url), tmp_path / "b2", first.clock)
    try:
        for _ in range(5):
            run, _ = await first.record_run(plan(trials=6))
            await _finish(first, [("infra_failed", None), ("completed", UNSCORED)] * 3)
            results = await asyncio.gather(
                first.requeue(run.id, "repair", [], False, "a", []),
                second.requeue(run.id, "repair", [], False, "b", []),
            )
            queued = sorted(r.repetition for *_, done in results for r in done.trials)
            assert queued == [1, 2, 3, 4, 5, 6]
            assert set((await _attempts_per_trial(first, run.id)).values()) == {2}
            report = await first.run_report(run.id)
            assert sum(r.queued for r in report.repairs) == 6
            # Drain the queue for the next round.
            await _finish(first, [("completed", SCORED)] * 6)
    finally:
        await first.close()
        await second.close()


async def test_repair_by_another_process__what_this_one_kept_is_read_again(database_url, tmp_path):
    """A warm store keeps a settled run's progress, report and catalog facts: a repair made by
    another store process moves the run's judge_version, so none of them is answered stale."""
    kept = await Store.open(database_url, tmp_path / "blobs", FakeClock())
    other = Store(db.create_engine(database_url), tmp_path / "b2", kept.clock)
    try:
        run = await _finished_run(kept)
        _, _, progress = await kept.get_run(run.id)
        report = await kept.run_report(run.id)
        await kept.list_tasks("ds", 10, "")
        assert progress[0]["queued"] == 0 and report.repairs == []
        await other.requeue(run.id, "repair", [], False, "elsewhere", [])
        _, _, progress = await kept.get_run(run.id)
        [(listed, _, listed_progress)], _ = await kept.list_runs(10, "")
        report = await kept.run_report(run.id)
        assert progress[0]["queued"] == listed_progress[0]["queued"] == 2
        assert [r.requested_by for r in report.repairs] == ["elsewhere"] and not report.complete
        await _finish(kept, [("completed", SCORED), ("completed", SCORED)])
        [task] = (await kept.list_tasks("ds", 10, "")).tasks
        assert task.passed == 3  # the repaired trials' passes counted, not the kept facts
    finally:
        await kept.close()
        await other.close()
