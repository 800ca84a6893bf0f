"""The durable job queue: claim with a lease, heartbeat, complete, cancel, recover.

A job row carries a lease (owner, fencing token, expiry). Every call about a
leased job names the token it was given; a stale token means another worker
holds the job now (or the lease expired and was reclaimed), and the call fails
with LeaseLost. The store's clock alone decides expiry.

The hot paths (claim, heartbeat, append events, complete, release, recovery)
are SQLAlchemy Core statements on the caller's connection, inside the one
transaction the caller began: no ORM unit of work, and the guarded updates
return what the response needs. Rows that never change once recorded (trials
with their cells, a run's spec and limits, tasks, harnesses) come from
`Pinned` (pinned.py), a per-store cache, so an operation reads each of them at most once.
Completing a job is in completion.py, the lease every call checks in leases.py.
"""

import json
from dataclasses import dataclass

from sqlalchemy import JSON, Boolean, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from hemra.services.common.errors import FailedPrecondition, LeaseLost
from hemra.services.domain import vocabulary
from hemra.services.domain.records import AttemptInfo, LeasedJob
from hemra.services.store import tables as t
from hemra.services.store import usage
from hemra.services.store.completion import Completion, close_attempt, close_attempt_row, maybe_retry
from hemra.services.store.leases import free_slot, lease_failure, live_lease
from hemra.services.store.pinned import (
    ATTEMPTS,
    EVENTS,
    HARNESSES,
    JOBS,
    RUNS,
    TASKS,
    TRIALS,
    CellInfo,
    Pinned,
    Record,
    RunInfo,
    TrialInfo,
)

# --------------------------------------------------------------------------- claim


@dataclass(frozen=True)
class Claimed:
    job: LeasedJob
    attempt: AttemptInfo
    trial: TrialInfo
    cell: CellInfo
    run: RunInfo
    task: Record
    harness: Record


_LEASED_JOB = (JOBS.c.id, JOBS.c.run_id, JOBS.c.attempt_id, JOBS.c.lease_token, JOBS.c.lease_expire_time)
#: A claimed trial's columns and its cell's, as the hot paths (pgqueue.py, sqlitequeue.py) read them.
TRIAL_KEYS = (
    "run_id",
    "cell_id",
    "task_digest",
    "task_name",
    "repetition",
    "position",
    "dataset_digest",
    "dataset_name",
    "harness_digest",
    "harness_name",
    "model",
)
_JSON_COLUMNS = [c.name for c in ATTEMPTS.c if isinstance(c.type, JSON)]
_BOOLEAN_COLUMNS = [c.name for c in ATTEMPTS.c if isinstance(c.type, Boolean)]


def attempt_of(row: dict) -> AttemptInfo:
    """An attempts row a driver read raw (JSON as text), as Core rows read: JSON columns
    decoded, booleans bool, artifacts a list."""
    values = {c.name: row[c.name] for c in ATTEMPTS.c}
    for name in _JSON_COLUMNS:
        value = values[name]
        values[name] = json.loads(value) if isinstance(value, str) else value
    for name in _BOOLEAN_COLUMNS:
        values[name] = bool(values[name])
    if values["artifacts"] is None:
        values["artifacts"] = []
    return AttemptInfo(**values)


async def claim(
    conn,
    pinned: Pinned,
    worker: str,
    lease_secs: float,
    now: float,
    run_id: str = "",
    recover: bool = True,
    pool: str = "",
    after: str = "",
    cell: str = "",
) -> Claimed | None:
    """Lease the oldest eligible job; None when the queue has nothing for us.

    A job is eligible when queued, of `run_id` and of a run in `pool` when they are
    given, and its run has a free slot (runs.leased below its concurrency). The slot is
    taken by a guarded update of the run row, so a run's concurrency holds across every
    worker. On PostgreSQL SKIP LOCKED lets racing claimers pass over each other's job
    rows; on SQLite BEGIN IMMEDIATE serializes them. Either way the update repeats
    `state = 'queued'`, so it is a compare-and-set. `after`: the job whose completion claims
    this one (see claimed_after). `cell`: only that cell's jobs, free slot or not: a harbor
    supervisor gathers its whole cell for one `harbor run`, which runs them at most the run's
    concurrency at a time (its -n); the slots they hold keep the run's other cells waiting.
    """
    if recover:
        await recover_expired(conn, pinned, now)
    pick = _pick(run_id, pool, cell)
    lease = (
        update(JOBS)
        .where(JOBS.c.id == pick.scalar_subquery(), JOBS.c.state == "queued")
        .values(
            state="leased",
            lease_owner=worker,
            lease_token=JOBS.c.lease_token + 1,
            lease_expire_time=now + lease_secs,
            try_count=JOBS.c.try_count + 1,
            claimed_after=after,
        )
    )
    start = update(ATTEMPTS).values(state="running", start_time=now)
    job = (await conn.execute(lease.returning(*_LEASED_JOB))).first()
    if job is None:
        return None
    attempt = (await conn.execute(start.where(ATTEMPTS.c.id == job.attempt_id).returning(*ATTEMPTS.c))).one()
    claimed = await _claimed(conn, pinned, job, attempt)
    if claimed.run.limited:
        # Last, so the run row stays locked for one statement and the commit.
        below = [] if cell else [RUNS.c.leased < RUNS.c.concurrency]
        slot = await conn.execute(
            update(RUNS).where(RUNS.c.id == job.run_id, *below).values(leased=RUNS.c.leased + 1).returning(RUNS.c.id)
        )
        if slot.first() is None:
            raise NoSlot(job.run_id)
    return claimed


def _pick(run_id: str, pool: str, cell: str):
    """The oldest eligible queued job's ID, its row locked (claim says which are eligible)."""
    free = [] if cell else [~RUNS.c.limited | (RUNS.c.leased < RUNS.c.concurrency)]
    pick = (
        select(JOBS.c.id)
        .join_from(JOBS, RUNS, RUNS.c.id == JOBS.c.run_id)
        .where(JOBS.c.state == "queued", *free)
        .order_by(JOBS.c.create_time, JOBS.c.id)
        .limit(1)
        .with_for_update(of=JOBS, skip_locked=True)
    )
    if run_id:
        pick = pick.where(JOBS.c.run_id == run_id)
    if pool:
        pick = pick.where(RUNS.c.pool == pool)
    if cell:
        of_cell = select(ATTEMPTS.c.id).join(TRIALS, TRIALS.c.id == ATTEMPTS.c.trial_id).where(TRIALS.c.cell_id == cell)
        pick = pick.where(JOBS.c.attempt_id.in_(of_cell))
    return pick


async def _claimed(conn, pinned: Pinned, job, attempt) -> Claimed:
    """A leased job with what its worker needs: trial, cell, run, task and harness (each read
    at most once per store process)."""
    trial, cell = await pinned.trial(conn, attempt.trial_id)
    run = await pinned.run(conn, job.run_id)
    task = await pinned.record(conn, TASKS, trial.task_digest)
    harness = await pinned.record(conn, HARNESSES, cell.harness_digest)
    return Claimed(LeasedJob.of(job), AttemptInfo.of(attempt), trial, cell, run, task, harness)


class NoSlot(Exception):
    """Another worker took the run's last slot first: roll the claim back and ask again."""


async def claimed_after(conn, pinned: Pinned, job_id: str, worker: str, now: float) -> list[Claimed]:
    """The jobs that completing `job_id` claimed for `worker` (CompleteJob's claim_next), while
    their leases hold: what a repeated CompleteJob hands back, since the lost first answer named
    them and nobody works them. Leasing others instead would leave these to expire as
    infrastructure failures. Rare (an answer lost after its commit), so no index: a scan."""
    jobs = (
        await conn.execute(
            select(*_LEASED_JOB)
            .where(
                JOBS.c.claimed_after == job_id,
                JOBS.c.state == "leased",
                JOBS.c.lease_owner == worker,
                JOBS.c.lease_expire_time >= now,
            )
            .order_by(JOBS.c.create_time, JOBS.c.id)
        )
    ).all()
    claimed = []
    for job in jobs:
        attempt = (await conn.execute(select(ATTEMPTS).where(ATTEMPTS.c.id == job.attempt_id))).one()
        claimed.append(await _claimed(conn, pinned, job, attempt))
    return claimed


# --------------------------------------------------------------------------- heartbeat and events


async def heartbeat(conn, job_id: str, token: int, lease_secs: float, now: float) -> tuple[float, bool]:
    """Extend the lease; returns (new expiry, cancel requested)."""
    expire = now + lease_secs
    cancel = select(RUNS.c.cancel_requested).where(RUNS.c.id == JOBS.c.run_id).scalar_subquery()
    row = (
        await conn.execute(
            update(JOBS)
            .where(*live_lease(job_id, token, now))
            .values(lease_expire_time=expire)
            .returning(cancel.label("cancel"))
        )
    ).first()
    if row is None:
        raise LeaseLost(f"job {job_id}: lease lost")
    return expire, bool(row.cancel)


#: An event row's columns after attempt_id and seq, in the order the hot paths insert them.
EVENT_COLUMNS = ("time", "type", "name", "payload", "duration")


def event_values(event: dict) -> tuple:
    """An event row's EVENT_COLUMNS values (the duration may be left out: 0)."""
    return event["time"], event["type"], event["name"], event["payload"], event.get("duration", 0.0)


async def append_events(conn, job_id: str, token: int, events: list[dict], now: float, first_seq: int = 0) -> int:
    """Check the lease and give events the next sequence numbers of the job's attempt; returns the
    last. With `first_seq`, a batch the attempt already holds is a repeat: nothing is appended."""
    leased_attempt = select(JOBS.c.attempt_id).where(*live_lease(job_id, token, now)).scalar_subquery()
    expected = (ATTEMPTS.c.event_count == first_seq - 1,) if first_seq else ()
    if not events:
        row = (await conn.execute(select(ATTEMPTS.c.event_count).where(ATTEMPTS.c.id == leased_attempt))).first()
        if row is None:
            raise await lease_failure(conn, job_id)
        return row.event_count
    row = (
        await conn.execute(
            update(ATTEMPTS)
            .where(ATTEMPTS.c.id == leased_attempt, *expected)
            .values(event_count=ATTEMPTS.c.event_count + len(events), **usage.added(ATTEMPTS, usage.of_events(events)))
            .returning(ATTEMPTS.c.id, ATTEMPTS.c.event_count)
        )
    ).first()
    if row is None:
        held = (await conn.execute(select(ATTEMPTS.c.event_count).where(ATTEMPTS.c.id == leased_attempt))).first()
        if held is None:
            raise await lease_failure(conn, job_id)
        if held.event_count >= first_seq - 1 + len(events):
            return held.event_count  # a repeated batch, already appended
        raise FailedPrecondition(
            f"job {job_id}: a batch of events from seq {first_seq}, but its attempt holds {held.event_count} events"
        )
    first = row.event_count - len(events) + 1
    await conn.execute(
        EVENTS.insert(), [dict(attempt_id=row.id, seq=first + i, **event) for i, event in enumerate(events)]
    )
    return row.event_count


async def release(conn, pinned: Pinned, job_id: str, token: int, reason: str, now: float) -> str:
    """Hand a leased job back (its worker is shutting down): the attempt closes as an
    infrastructure failure marked released and a fresh attempt is queued. Returns its ID."""
    error = f"released: {reason}"
    job = (
        await conn.execute(
            update(JOBS)
            .where(*live_lease(job_id, token, now))
            .values(state="done", last_error=error, lease_token=JOBS.c.lease_token + 1)
            .returning(JOBS.c.attempt_id, JOBS.c.run_id)
        )
    ).first()
    if job is None:
        raise await lease_failure(conn, job_id)
    await free_slot(conn, pinned, job.run_id)
    attempt = await close_attempt_row(
        conn, job.attempt_id, Completion(vocabulary.INFRA_FAILED, error=error), now, released=True
    )
    pinned.take_trial(attempt.trial_id)  # its retry, claimed, is kept again
    return await maybe_retry(conn, job.run_id, attempt.trial_id, attempt.number, now)


async def recover_expired(conn, pinned: Pinned, now: float, limit: int = 100) -> int:
    """Close attempts whose worker stopped heartbeating as infra failures (worker lost)."""
    query = (
        select(JOBS.c.id, JOBS.c.run_id, JOBS.c.attempt_id, JOBS.c.lease_owner)
        .where(JOBS.c.state == "leased", JOBS.c.lease_expire_time < now)
        .order_by(JOBS.c.lease_expire_time)
        .limit(limit)
        .with_for_update(skip_locked=True)
    )
    jobs = (await conn.execute(query)).all()
    for job in jobs:
        error = f"worker lost: {job.lease_owner} stopped heartbeating"
        # A new token: the lost worker's late CompleteJob is LEASE_LOST, never a "repeat".
        await conn.execute(
            update(JOBS)
            .where(JOBS.c.id == job.id)
            .values(state="done", last_error=error, lease_token=JOBS.c.lease_token + 1)
        )
        await free_slot(conn, pinned, job.run_id)
        cancelled = (await conn.execute(select(RUNS.c.cancel_requested).where(RUNS.c.id == job.run_id))).scalar_one()
        if cancelled:
            attempt = await close_attempt_row(
                conn, job.attempt_id, Completion(vocabulary.CANCELLED, error="cancelled"), now
            )
            pinned.take_trial(attempt.trial_id)
            continue
        attempt = await close_attempt_row(conn, job.attempt_id, Completion(vocabulary.INFRA_FAILED, error=error), now)
        pinned.take_trial(attempt.trial_id)  # its retry, claimed, is kept again
        await maybe_retry(conn, job.run_id, attempt.trial_id, attempt.number, now)
    return len(jobs)


async def recover_run(conn, pinned: Pinned, run_id: str, now: float) -> int:
    """Close the run's attempts whose worker stopped heartbeating (their lease expired) as
    infra failures, worker lost, without queueing retries: a resume queues them again."""
    jobs = (
        await conn.execute(
            select(JOBS.c.id, JOBS.c.attempt_id, JOBS.c.lease_owner).where(
                JOBS.c.run_id == run_id, JOBS.c.state == "leased", JOBS.c.lease_expire_time < now
            )
        )
    ).all()
    for job in jobs:
        error = f"worker lost: {job.lease_owner} stopped heartbeating"
        await conn.execute(
            update(JOBS)
            .where(JOBS.c.id == job.id)
            .values(state="done", last_error=error, lease_token=JOBS.c.lease_token + 1)
        )
        await free_slot(conn, pinned, run_id)
        attempt = await close_attempt_row(conn, job.attempt_id, Completion(vocabulary.INFRA_FAILED, error=error), now)
        pinned.take_trial(attempt.trial_id)
    return len(jobs)


async def cancel_run(session: AsyncSession, run: t.Run, now: float) -> int:
    """Mark the run cancelled and close its queued attempts; leased ones stop on heartbeat."""
    run.cancel_requested = True
    queued = list(
        (await session.execute(select(t.Job).where(t.Job.run_id == run.id, t.Job.state == "queued"))).scalars()
    )
    for job in queued:
        job.state = "done"
        attempt = await session.get(t.Attempt, job.attempt_id)
        close_attempt(attempt, Completion(vocabulary.CANCELLED, error="cancelled before it started"), now)
    return len(queued)


async def cancel_trial(session: AsyncSession, pinned: Pinned, trial_id: str, now: float) -> str:
    """Cancel one trial's unfinished attempt, leaving the rest of its run alone.

    A queued job ends at once. A leased one ends too: its job is closed, so the
    worker's next heartbeat finds the lease lost and stops the attempt (nothing
    it sends later changes the record). Returns the cancelled attempt's ID, or
    "" when the trial has no unfinished attempt.
    """
    job = (
        await session.execute(
            select(JOBS.c.id, JOBS.c.run_id, JOBS.c.attempt_id, JOBS.c.state)
            .join_from(JOBS, ATTEMPTS, ATTEMPTS.c.id == JOBS.c.attempt_id)
            .where(ATTEMPTS.c.trial_id == trial_id, JOBS.c.state != "done")
        )
    ).first()
    if job is None:
        return ""
    await session.execute(
        update(JOBS)
        .where(JOBS.c.id == job.id)
        .values(state="done", last_error="cancelled", lease_token=JOBS.c.lease_token + 1)
    )
    await close_attempt_row(session, job.attempt_id, Completion(vocabulary.CANCELLED, error="cancelled"), now)
    pinned.take_trial(trial_id)
    if job.state == "leased":
        await free_slot(session, pinned, job.run_id)
    return job.attempt_id
