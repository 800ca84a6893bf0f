"""The store's queue on SQLite and PostgreSQL: leases, tokens, expiry, retries, cancel, races."""

import asyncio
import dataclasses

import pytest
from rich.console import Console
from sqlalchemy import select

from hemra.clients.cli import render
from hemra.services.common.errors import FailedPrecondition, LeaseLost
from hemra.services.domain import vocabulary
from hemra.services.store import completion, convert, records
from hemra.services.store import tables as t
from hemra.services.store.service import Store
from hemra.v1 import store_service_pb2 as spb


class FakeClock:
    """The store's clock, moved by the test instead of by sleeping."""

    def __init__(self, now: float = 1_800_000_000.0):
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
async def store(database_url, tmp_path):
    store = await Store.open(database_url, tmp_path / "blobs", FakeClock())
    yield store
    await store.close()


def plan(trials: int = 3, concurrency: int = 10, retries: int = 0, label: str = "q") -> records.PlannedRun:
    return records.PlannedRun(
        label=label,
        spec={"label": label},
        concurrency=concurrency,
        max_infra_retries=retries,
        datasets=[dict(digest="sha256:d", dataset_name="ds", source="/x", task_digests=["sha256:t"], create_time=0.0)],
        tasks=[dict(digest="sha256:t", task_name="task", record={})],
        harnesses=[dict(digest="sha256:h", harness_name="h", record={})],
        cells=[("sha256:d", "ds", "sha256:h", "h", "")],
        trials=[(0, "sha256:t", "task", k + 1, None) for k in range(trials)],
    )


async def test_claim__oldest_first_then_empty(store):
    run, _ = await store.record_run(plan(trials=2))
    first = await store.claim_job("w1", 30, run.id)
    second = await store.claim_job("w1", 30, run.id)
    assert (first.trial.repetition, second.trial.repetition) == (1, 2)
    assert first.attempt.state == "running"
    assert await store.claim_job("w1", 30, run.id) is None


async def test_claim__honours_run_concurrency_across_workers(store):
    run, _ = await store.record_run(plan(trials=5, concurrency=2))
    claims = [await store.claim_job(f"w{i}", 30) for i in range(4)]
    assert sum(c is not None for c in claims) == 2


async def test_claim__only_the_executor_pools_runs(store):
    gpu, _ = await store.record_run(dataclasses.replace(plan(trials=2, label="gpu"), pool="gpu"))
    default, _ = await store.record_run(plan(trials=1, label="cpu"))
    assert (await store.claim_job("w1", 30, pool="default")).job.run_id == default.id
    assert await store.claim_job("w1", 30, pool="default") is None
    assert await store.claim_job("w1", 30, run_id=default.id, pool="gpu") is None
    assert (await store.claim_job("w2", 30, run_id=gpu.id, pool="gpu")).job.run_id == gpu.id
    assert (await store.claim_job("w3", 30)).job.run_id == gpu.id  # no pool: any
    assert gpu.pool == "gpu" and default.pool == "default"


async def test_claim__a_cell_gathers_all_its_jobs_and_holds_the_runs_slots_until_they_finish(store):
    two_cells = dataclasses.replace(
        plan(concurrency=1),
        harnesses=[
            dict(digest="sha256:h", harness_name="h", record={}),
            dict(digest="sha256:g", harness_name="g", record={}),
        ],
        cells=[("sha256:d", "ds", "sha256:h", "h", ""), ("sha256:d", "ds", "sha256:g", "g", "")],
        trials=[(c, "sha256:t", "task", k + 1, None) for k in range(2) for c in (0, 1)],
    )
    run, _ = await store.record_run(two_cells)
    first = await store.claim_job("w1", 30, run.id)  # a harbor supervisor's first job: oldest, cell 0
    cell = first.trial.cell_id
    assert await store.claim_job("w2", 30, run.id) is None  # concurrency 1: the slot is taken
    gathered = await store.claim_job("w1", 30, run.id, cell=cell)  # its cell's, beyond the free slots
    assert gathered.trial.cell_id == cell and gathered.trial.repetition == 2
    assert await store.claim_job("w1", 30, run.id, cell=cell) is None  # the cell has no more
    done = completion.Completion(vocabulary.COMPLETED)
    await store.complete_job(first.job.id, first.job.lease_token, done)
    assert await store.claim_job("w2", 30, run.id) is None  # one of the cell's still holds a slot
    await store.complete_job(gathered.job.id, gathered.job.lease_token, done)
    other = await store.claim_job("w2", 30, run.id)
    assert other.trial.cell_id != cell
    assert await store.claim_job("w2", 30, run.id) is None  # concurrency 1 again


async def test_pinned__keeps_live_trials_only_with_one_copy_of_each_cell(store):
    run, _ = await store.record_run(plan(trials=4, retries=1))
    claims = [await store.claim_job(f"w{i}", 30, run.id) for i in range(4)]
    assert all(store.pinned.cached("trial", c.trial.id) == (c.trial, c.cell) for c in claims)
    assert all(c.cell is claims[0].cell for c in claims)  # one cell, kept once
    kept = lambda c: store.pinned.cached("trial", c.trial.id) is not None  # noqa: E731
    done = completion.Completion(vocabulary.COMPLETED)
    first = await store.complete_job(claims[0].job.id, claims[0].job.lease_token, done)
    assert (first.trial, first.cell) == (claims[0].trial, claims[0].cell) and not kept(claims[0])
    again = await store.complete_job(claims[0].job.id, claims[0].job.lease_token, done)  # read again
    assert again.repeated and (again.trial, again.cell) == (first.trial, first.cell) and not kept(claims[0])
    broke = completion.Completion(vocabulary.INFRA_FAILED, error="sandbox broke")
    failed = await store.complete_job(claims[1].job.id, claims[1].job.lease_token, broke)
    assert failed.retry and failed.trial == claims[1].trial and not kept(claims[1])
    await store.release_job(claims[2].job.id, claims[2].job.lease_token, "shutting down")
    assert not kept(claims[2])
    await store.cancel(claims[3].attempt.id)
    assert not kept(claims[3])
    retries = [await store.claim_job("w9", 30, run.id) for _ in range(2)]  # the two retries: kept again
    assert {r.trial.id for r in retries} == {claims[1].trial.id, claims[2].trial.id} and all(map(kept, retries))
    for retry in retries:
        finished = await store.complete_job(retry.job.id, retry.job.lease_token, done)
        assert finished.trial == retry.trial and not kept(retry)
    assert await store.claim_job("w9", 30, run.id) is None


async def test_heartbeat__stale_token_is_lease_lost(store):
    run, _ = await store.record_run(plan(trials=1))
    claimed = await store.claim_job("w1", 30)
    expire, cancel = await store.heartbeat_job(claimed.job.id, claimed.job.lease_token, 30)
    assert expire == store.clock() + 30 and cancel is False
    with pytest.raises(LeaseLost):
        await store.heartbeat_job(claimed.job.id, claimed.job.lease_token + 1, 30)


async def test_complete__is_idempotent_with_the_same_token(store):
    await store.record_run(plan(trials=1))
    claimed = await store.claim_job("w1", 30)
    done = completion.Completion(
        vocabulary.COMPLETED, score={"state": "SCORE_STATE_SCORED", "rewards": {"reward": 1.0}}
    )
    first = await store.complete_job(claimed.job.id, claimed.job.lease_token, done)
    again = await store.complete_job(claimed.job.id, claimed.job.lease_token, done)
    assert first[0].id == again[0].id and again[0].outcome == "completed"
    assert (first.repeated, again.repeated) == (False, True)
    with pytest.raises(LeaseLost):
        await store.complete_job(claimed.job.id, claimed.job.lease_token + 5, done)


async def test_expired_lease__closes_attempt_as_infra_and_queues_a_retry(store):
    run, _ = await store.record_run(plan(trials=1, retries=1))
    claimed = await store.claim_job("w1", 30)
    await store.append_events(
        claimed.job.id, claimed.job.lease_token, [dict(time=1.0, type="status", name="x", payload="{}", duration=0.0)]
    )
    store.clock.now += 31  # the worker died: no heartbeat
    retry = await store.claim_job("w2", 30)
    assert retry.attempt.number == 2 and retry.trial.id == claimed.trial.id
    lost = (await store.get_attempt(claimed.attempt.id)).attempt
    assert (lost.outcome, lost.state, lost.event_count) == ("infra_failed", "finished", 1)
    assert "worker lost" in lost.error
    with pytest.raises(LeaseLost):
        await store.heartbeat_job(claimed.job.id, claimed.job.lease_token, 30)
    store.clock.now += 31  # the retry's worker dies too: retries are used up
    assert await store.claim_job("w3", 30) is None
    report = await store.run_report(run.id)
    row = report.datasets[0].rows[0]
    assert row.infra_failed == 1 and row.graded == 0 and not report.complete


async def test_infra_failure__retried_only_up_to_max(store):
    await store.record_run(plan(trials=1, retries=0))
    claimed = await store.claim_job("w1", 30)
    completed = await store.complete_job(
        claimed.job.id, claimed.job.lease_token, completion.Completion(vocabulary.INFRA_FAILED, error="sandbox broke")
    )
    assert completed.retry == "" and not completed.repeated


async def test_report__counts_retried_attempts_and_groups_their_reasons(store):
    run, _ = await store.record_run(plan(trials=2, retries=3))
    errors = ["sandbox broke\nTraceback: ...", "sandbox broke", "engine away"]
    for error in errors:  # three attempts fail (none of their trials out of retries), then each completes
        claimed = await store.claim_job("w1", 30)
        await store.complete_job(
            claimed.job.id, claimed.job.lease_token, completion.Completion(vocabulary.INFRA_FAILED, error=error)
        )
    while claimed := await store.claim_job("w1", 30):
        await store.complete_job(claimed.job.id, claimed.job.lease_token, completion.Completion(vocabulary.COMPLETED))
    report = await store.run_report(run.id)
    row = report.datasets[0].rows[0]
    assert report.max_infra_retries == 3
    assert (row.trials, row.infra_failed, row.retried) == (2, 0, 3)
    assert [(r.reason, r.attempts) for r in row.retry_reasons] == [("sandbox broke", 2), ("engine away", 1)]
    console = Console(record=True, width=200, color_system=None)
    render.print_report(console, convert.message(report, spb.Report))
    text = console.export_text()
    assert "retried (h): 2 × sandbox broke" in text and "retried at most 3 times" in text


async def test_harness_failure__is_a_result_never_retried(store):
    await store.record_run(plan(trials=1, retries=3))
    claimed = await store.claim_job("w1", 30)
    completed = await store.complete_job(
        claimed.job.id, claimed.job.lease_token, completion.Completion(vocabulary.HARNESS_FAILED, exit_code=3)
    )
    assert completed.retry == "" and await store.claim_job("w1", 30) is None


async def test_cancel__closes_queued_and_signals_running(store):
    run, _ = await store.record_run(plan(trials=3))
    running = await store.claim_job("w1", 30)
    _, _, cancelled = await store.cancel_run(run.label)
    assert cancelled == 2
    _, cancel = await store.heartbeat_job(running.job.id, running.job.lease_token, 30)
    assert cancel is True
    await store.complete_job(running.job.id, running.job.lease_token, completion.Completion(vocabulary.CANCELLED))
    _, cells, (progress, per_cell) = await store.get_run(run.id)
    assert progress["cancelled"] == 3 and progress["failed"] == 0
    assert per_cell[cells[0].id]["cancelled"] == 3


async def test_racing_claimers__never_claim_a_job_twice(store):
    await store.record_run(plan(trials=40, concurrency=100))

    async def worker(name: str) -> list[str]:
        got = []
        while (claimed := await store.claim_job(name, 30)) is not None:
            got.append(claimed.job.id)
        return got

    results = await asyncio.gather(*(worker(f"w{i}") for i in range(6)))
    claimed = [job for result in results for job in result]
    assert len(claimed) == 40 and len(set(claimed)) == 40


async def test_racing_claimers__run_concurrency_holds_and_slots_come_back(store):
    run, _ = await store.record_run(plan(trials=12, concurrency=3))
    claims = await asyncio.gather(*(store.claim_job(f"w{i}", 30) for i in range(10)))
    held = [c for c in claims if c is not None]
    assert len(held) == 3 and len({c.job.id for c in held}) == 3
    for claimed in held:
        await store.complete_job(claimed.job.id, claimed.job.lease_token, completion.Completion(vocabulary.COMPLETED))
    again = await asyncio.gather(*(store.claim_job(f"w{i}", 30) for i in range(10)))
    assert sum(c is not None for c in again) == 3  # every slot freed by a completion is claimable


async def test_complete__stale_and_repeated_tokens_on_the_hot_path(store):
    await store.record_run(plan(trials=1))
    claimed = await store.claim_job("w1", 30)
    with pytest.raises(LeaseLost):
        await store.complete_job(
            claimed.job.id, claimed.job.lease_token + 1, completion.Completion(vocabulary.COMPLETED)
        )
    first = await store.complete_job(
        claimed.job.id,
        claimed.job.lease_token,
        completion.Completion(
            vocabulary.COMPLETED, agent_version="2.1", agent_name="agent-x", score={"state": "SCORE_STATE_SCORED"}
        ),
    )
    again = await store.complete_job(
        claimed.job.id, claimed.job.lease_token, completion.Completion(vocabulary.COMPLETED)
    )
    assert first[0].id == again[0].id and again[0].outcome == vocabulary.COMPLETED
    for attempt in (first[0], again[0]):  # every column the completion carries, on either path
        assert (attempt.agent_version, attempt.agent_name, attempt.score) == (
            "2.1",
            "agent-x",
            {"state": "SCORE_STATE_SCORED"},
        )
    assert (first[1].id, first[3]) == (again[1].id, again[3]) == (claimed.trial.id, "")


@pytest.mark.postgres
async def test_hot_path__one_round_trip_per_call_on_postgres(postgres_url, tmp_path):
    """The hot path's pool sends nothing on release (asyncpg's default reset is a round trip
    per call): each backend's last statement is a claim or a completion, never a reset."""
    import asyncpg

    store = await Store.open(postgres_url, tmp_path / "blobs", FakeClock())
    admin = await asyncpg.connect(postgres_url)
    try:
        await store.record_run(plan(trials=2))
        claimed = await store.claim_job("w1", 30)
        await store.complete_job(claimed.job.id, claimed.job.lease_token, completion.Completion(vocabulary.COMPLETED))
        await store.claim_job("w1", 30)
        last = [
            row["query"]
            for row in await admin.fetch(
                "SELECT query FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
        ]
        assert any("WITH pick AS" in q for q in last), last  # the pool's connection, its claim last
        assert not any("RESET ALL" in q for q in last), last
    finally:
        await admin.close()
        await store.close()


async def test_complete__keeps_the_judge_scores_it_carries_on_the_hot_path(store):
    """The executor's judges score before CompleteJob; their scores arrive with it and must be
    kept on either path (PostgreSQL's one-statement completion included)."""
    await store.record_run(plan(trials=1))
    claimed = await store.claim_job("w1", 30)
    judged = [{"state": "SCORE_STATE_SCORED", "scorer": "judge:quality", "judge": "quality", "rewards": {"q": 0.5}}]
    done = completion.Completion(vocabulary.COMPLETED, score={"state": "SCORE_STATE_SCORED"}, judge_scores=judged)
    first = await store.complete_job(claimed.job.id, claimed.job.lease_token, done)
    assert first[0].judge_scores == judged
    async with store.engine.connect() as conn:
        kept = (await conn.execute(select(t.Attempt.judge_scores).where(t.Attempt.id == first[0].id))).scalar_one()
    assert kept == judged


async def test_record_run__label_finds_newest(store):
    older, _ = await store.record_run(plan(label="same"))
    store.clock.now += 1
    newer, _ = await store.record_run(plan(label="same"))
    found, _, _ = await store.get_run("same")
    assert found.id == newer.id != older.id
    assert (await store.get_run(older.id))[0].id == older.id


async def test_events__paged_in_order(store):
    await store.record_run(plan(trials=1))
    claimed = await store.claim_job("w1", 30)
    rows = [dict(time=float(i), type="output", name=str(i), payload="{}", duration=0.0) for i in range(25)]
    await store.append_events(claimed.job.id, claimed.job.lease_token, rows[:10])
    await store.append_events(claimed.job.id, claimed.job.lease_token, rows[10:])
    page, token = await store.list_events(claimed.attempt.id, 20, "")
    rest, end = await store.list_events(claimed.attempt.id, 20, token)
    assert [e.seq for e in page + rest] == list(range(1, 26)) and end == ""
    assert [e.name for e in page[:3]] == ["0", "1", "2"]


async def test_events__a_repeated_batch_is_not_appended_twice(store):
    """An executor that lost the answer in a store outage sends the batch again: same first_seq."""
    await store.record_run(plan(trials=1))
    claimed = await store.claim_job("w1", 30)
    job, token = claimed.job.id, claimed.job.lease_token
    rows = [dict(time=float(i), type="output", name=str(i), payload="{}", duration=0.0) for i in range(5)]
    assert await store.append_events(job, token, rows[:3], first_seq=1) == 3
    assert await store.append_events(job, token, rows[:3], first_seq=1) == 3  # the repeat
    assert await store.append_events(job, token, rows[3:], first_seq=4) == 5
    with pytest.raises(FailedPrecondition, match="from seq 9, but its attempt holds 5 events"):
        await store.append_events(job, token, rows[3:], first_seq=9)  # a gap: events went missing
    with pytest.raises(LeaseLost):
        await store.append_events(job, token + 1, rows[3:], first_seq=6)
    page, _ = await store.list_events(claimed.attempt.id, 20, "")
    assert [e.name for e in page] == ["0", "1", "2", "3", "4"]


async def test_events__the_hot_path_numbers_sums_and_leaves_repeats_to_queue_py(store):
    """Store.fast.append_events (one transaction, or one statement on PostgreSQL) takes a batch on
    a live lease, numbered after what the attempt holds, with its usage summed; a repeated or
    out-of-order batch and a stale token are not its to answer (None: queue.py says which)."""
    run, _ = await store.record_run(plan(trials=1))
    claimed = await store.claim_job("w1", 30)
    job, token, now = claimed.job.id, claimed.job.lease_token, store.clock()
    rows = [
        dict(time=1.0, type="output", name="a", payload="{}", duration=0.5),
        dict(time=2.0, type="usage", name="b", payload='{"input_tokens": 7, "cost_usd": 0.25}'),
    ]
    assert await store.fast.append_events(job, token, rows, now, 1) == 2
    assert await store.fast.append_events(job, token, rows[1:], now, 0) == 3  # unnumbered: appended
    assert await store.fast.append_events(job, token, rows, now, 1) is None  # a repeat
    assert await store.fast.append_events(job, token, rows, now, 7) is None  # a gap
    assert await store.fast.append_events(job, token + 1, rows, now, 4) is None  # not the lease
    page, _ = await store.list_events(claimed.attempt.id, 20, "")
    assert [(e.seq, e.name, e.duration) for e in page] == [(1, "a", 0.5), (2, "b", 0.0), (3, "b", 0.0)]
    [used] = await store.attempt_usage(run.id)
    assert (used.input_tokens, used.cost_usd, used.usage_events) == (14, 0.5, 2)


async def test_blobs__content_addressed_and_verified(store):
    digests = await store.put_blobs([("", b"hello"), ("", b"hello")])
    assert digests[0] == digests[1] and digests[0].startswith("sha256:2cf24dba")
    assert store.get_blobs(digests[:1]) == [b"hello"]
    assert store.missing_blobs(digests + ["sha256:" + "0" * 64]) == ["sha256:" + "0" * 64]
    from hemra.services.common.errors import InvalidArgument

    with pytest.raises(InvalidArgument):
        await store.put_blobs([("sha256:" + "1" * 64, b"other")])


async def test_report__counts_outcomes_apart(store):
    run, _ = await store.record_run(plan(trials=4))
    outcomes = [
        completion.Completion(vocabulary.COMPLETED, score=_score(1.0)),
        completion.Completion(vocabulary.TIMED_OUT, score=_score(0.0)),
        completion.Completion(vocabulary.COMPLETED, score={"state": "SCORE_STATE_SCORER_FAILED"}),
        completion.Completion(vocabulary.INFRA_FAILED, error="x"),
    ]
    for done in outcomes:
        claimed = await store.claim_job("w", 30)
        await store.complete_job(claimed.job.id, claimed.job.lease_token, done)
    row = (await store.run_report(run.id)).datasets[0].rows[0]
    assert (row.passed, row.binary_graded, row.timed_out) == (1, 2, 1)
    assert (row.scorer_failed, row.infra_failed) == (1, 1)
    assert any("nothing graded" in flag for flag in row.flags)


def _score(value: float) -> dict:
    return {"state": "SCORE_STATE_SCORED", "rewards": {"reward": value}, "scorerFingerprint": "sha256:f"}


async def test_list_runs__empty_store_then_pages_newest_first(store):
    assert await store.list_runs(10, "") == ([], "")
    for _ in range(3):
        await store.record_run(plan(trials=1))
        store.clock.now += 1
    first, token = await store.list_runs(2, "")
    rest, end = await store.list_runs(2, token)
    assert [r[0].create_time for r in first + rest] == sorted((r[0].create_time for r in first + rest), reverse=True)
    assert len(first) == 2 and len(rest) == 1 and end == ""


async def test_get_attempt__by_attempt_or_job_id(store):
    await store.record_run(plan(trials=1))
    claimed = await store.claim_job("w1", 30)
    by_job = (await store.get_attempt(claimed.job.id)).attempt
    by_attempt = (await store.get_attempt(claimed.attempt.id)).attempt
    assert by_job.id == by_attempt.id == claimed.attempt.id


async def test_postgres_url__libpq_sslmode_reaches_both_drivers(postgres_url, tmp_path):
    # sslmode is how libpq, KEDA and most URLs say it; SQLAlchemy's asyncpg dialect and the
    # queue's own asyncpg pool each take it in their own spelling.
    store = await Store.open(postgres_url + "?sslmode=disable", tmp_path / "blobs", FakeClock())
    try:
        assert store.fast is not None
        run, _ = await store.record_run(plan(trials=1))
        assert (await store.claim_job("w1", 30)).job.run_id == run.id
    finally:
        await store.close()
