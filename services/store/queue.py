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
`Pinned`, a per-store cache, so an operation reads each of them at most once.
"""

import json
from collections.abc import Callable
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any, NamedTuple

from sqlalchemy import JSON, Boolean, bindparam, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from services.common.errors import FailedPrecondition, LeaseLost, NotFound
from services.store import db, records, usage
from services.domain.rewards import verdict as verdict_of
from services.store import tables as t

Clock = Callable[[], float]

JOBS, ATTEMPTS, RUNS = t.Job.__table__, t.Attempt.__table__, t.Run.__table__
TRIALS, CELLS, TASKS, HARNESSES = t.Trial.__table__, t.Cell.__table__, t.Task.__table__, t.Harness.__table__
EVENTS = t.Event.__table__


# --------------------------------------------------------------------------- pinned rows


@dataclass(frozen=True)
class TrialInfo:
    id: str
    run_id: str
    cell_id: str
    task_digest: str
    task_name: str
    repetition: int


@dataclass(frozen=True)
class CellInfo:
    id: str
    run_id: str
    position: int
    dataset_digest: str
    dataset_name: str
    harness_digest: str
    harness_name: str
    model: str


@dataclass(frozen=True)
class RunInfo:
    """A run's columns that never change after record_run (so not cancel_requested or leased)."""

    id: str
    spec: dict
    concurrency: int
    max_infra_retries: int
    limited: bool


@dataclass(frozen=True)
class Record:
    """A pinned task or harness: its digest and its message as JSON."""

    digest: str
    record: dict


_TRIAL_CELL = (
    select(
        TRIALS.c.id,
        TRIALS.c.run_id,
        TRIALS.c.cell_id,
        TRIALS.c.task_digest,
        TRIALS.c.task_name,
        TRIALS.c.repetition,
        CELLS.c.position,
        CELLS.c.dataset_digest,
        CELLS.c.dataset_name,
        CELLS.c.harness_digest,
        CELLS.c.harness_name,
        CELLS.c.model,
    )
    .join_from(TRIALS, CELLS, CELLS.c.id == TRIALS.c.cell_id)
    .where(TRIALS.c.id == bindparam("trial_id"))
)
_RUN_INFO = select(RUNS.c.spec, RUNS.c.concurrency, RUNS.c.max_infra_retries, RUNS.c.limited).where(
    RUNS.c.id == bindparam("run_id")
)


class Pinned:
    """Rows that never change once recorded, read at most once per store process.

    Bounded: past `size` entries the oldest go first (and are read again when
    needed). Nothing cached here is ever deleted by the store; a task or harness
    record is replaced only by a new run that records it as its planner read it
    (records.insert_or_replace), and that run forgets the cached copy.
    """

    def __init__(self, size: int = 16384):
        self.size = size
        self._rows: dict[tuple, Any] = {}

    def _put(self, key: tuple, value):
        if len(self._rows) >= self.size:
            self._rows.pop(next(iter(self._rows)))
        self._rows[key] = value
        return value

    async def trial(self, conn, trial_id: str) -> tuple[TrialInfo, CellInfo]:
        found = self._rows.get(("trial", trial_id))
        if found is not None:
            return found
        return self.put_trial((await conn.execute(_TRIAL_CELL, {"trial_id": trial_id})).one())

    def put_trial(self, row) -> tuple[TrialInfo, CellInfo]:
        """Keep a trial and its cell read elsewhere (a row with _TRIAL_CELL's columns)."""
        return self._put(
            ("trial", row.id),
            (
                TrialInfo(row.id, row.run_id, row.cell_id, row.task_digest, row.task_name, row.repetition),
                CellInfo(
                    row.cell_id,
                    row.run_id,
                    row.position,
                    row.dataset_digest,
                    row.dataset_name,
                    row.harness_digest,
                    row.harness_name,
                    row.model,
                ),
            ),
        )

    def forget(self, kind: str, key: str) -> None:
        """Drop a task or harness record a new run recorded again (it may have replaced it)."""
        self._rows.pop((kind, key), None)

    def cached(self, kind: str, key: str):
        """A row already read ("trial", "run", or a table name with a digest), else None."""
        return self._rows.get((kind, key))

    async def run(self, conn, run_id: str) -> RunInfo:
        found = self._rows.get(("run", run_id))
        if found is not None:
            return found
        row = (await conn.execute(_RUN_INFO, {"run_id": run_id})).one()
        return self._put(
            ("run", run_id), RunInfo(run_id, row.spec, row.concurrency, row.max_infra_retries, bool(row.limited))
        )

    async def record(self, conn, table, digest: str) -> Record:
        found = self._rows.get((table.name, digest))
        if found is not None:
            return found
        record = (await conn.execute(select(table.c.record).where(table.c.digest == digest))).scalar_one()
        return self._put((table.name, digest), Record(digest, record))


# --------------------------------------------------------------------------- claim


@dataclass
class Claimed:
    job: Any  # Row: id, run_id, attempt_id, lease_token, lease_expire_time
    attempt: Any  # Row of every attempts column
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


def attempt_of(row: dict) -> SimpleNamespace:
    """An attempts row a driver read raw (JSON as text), as Core rows read: attributes, JSON
    columns decoded, booleans bool, artifacts a list."""
    attempt = SimpleNamespace(**{c.name: row[c.name] for c in ATTEMPTS.c})
    for name in _JSON_COLUMNS:
        value = getattr(attempt, name)
        setattr(attempt, name, json.loads(value) if isinstance(value, str) else value)
    for name in _BOOLEAN_COLUMNS:
        setattr(attempt, name, bool(getattr(attempt, name)))
    if attempt.artifacts is None:
        attempt.artifacts = []
    return attempt


def _live_lease(job_id: str, token: int, now: float):
    """The token guard: the job is leased under this token and the lease has not expired."""
    return (JOBS.c.id == job_id, JOBS.c.lease_token == token, JOBS.c.state == "leased", JOBS.c.lease_expire_time >= now)


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


async def _claimed(conn, pinned: Pinned, job, attempt) -> Claimed:
    """A leased job with what its worker needs: trial, cell, run, task and harness (each read
    at most once per store process)."""
    trial, cell = await pinned.trial(conn, attempt.trial_id)
    run = await pinned.run(conn, job.run_id)
    task = await pinned.record(conn, TASKS, trial.task_digest)
    harness = await pinned.record(conn, HARNESSES, cell.harness_digest)
    return Claimed(job, attempt, trial, cell, run, task, harness)


class NoSlot(Exception):
    """Another worker took the run's last slot first: roll the claim back and ask again."""


async def claimed_after(conn, pinned: Pinned, job_id: str, worker: str, now: float) -> Claimed | None:
    """The job that completing `job_id` claimed for `worker` (CompleteJob's claim_next), while
    its lease holds: what a repeated CompleteJob hands back, since the lost first answer named
    it and nobody works it. Leasing another instead would leave this one to expire as an
    infrastructure failure. Rare (an answer lost after its commit), so no index: a scan."""
    job = (
        await conn.execute(
            select(*_LEASED_JOB).where(
                JOBS.c.claimed_after == job_id,
                JOBS.c.state == "leased",
                JOBS.c.lease_owner == worker,
                JOBS.c.lease_expire_time >= now,
            )
        )
    ).first()
    if job is None:
        return None
    attempt = (await conn.execute(select(ATTEMPTS).where(ATTEMPTS.c.id == job.attempt_id))).one()
    return await _claimed(conn, pinned, job, attempt)


async def _free_slot(conn, pinned: Pinned, run_id: str) -> None:
    """The run's lease count, one down (every path that ends a lease runs it).
    Runs that are not limited keep no count (`limited` never changes)."""
    if (await pinned.run(conn, run_id)).limited:
        await conn.execute(
            update(RUNS).where(RUNS.c.id == run_id, RUNS.c.limited, RUNS.c.leased > 0).values(leased=RUNS.c.leased - 1)
        )


# --------------------------------------------------------------------------- heartbeat and events


async def heartbeat(conn, job_id: str, token: int, lease_secs: float, now: float) -> tuple[float, bool]:
    """Extend the lease; returns (new expiry, cancel requested)."""
    expire = now + lease_secs
    cancel = select(RUNS.c.cancel_requested).where(RUNS.c.id == JOBS.c.run_id).scalar_subquery()
    row = (
        await conn.execute(
            update(JOBS)
            .where(*_live_lease(job_id, token, now))
            .values(lease_expire_time=expire)
            .returning(cancel.label("cancel"))
        )
    ).first()
    if row is None:
        raise LeaseLost(f"job {job_id}: lease lost")
    return expire, bool(row.cancel)


async def _lease_failure(conn, job_id: str) -> Exception:
    """Why a guarded statement matched nothing: no such job, or the lease is gone."""
    found = (await conn.execute(select(JOBS.c.id).where(JOBS.c.id == job_id))).first()
    return NotFound(f"no job {job_id!r}") if found is None else LeaseLost(f"job {job_id}: lease lost")


#: An event row's columns after attempt_id and seq, in the order the hot paths insert them.
EVENT_COLUMNS = ("time", "type", "name", "payload", "duration")


def event_values(event: dict) -> tuple:
    """An event row's EVENT_COLUMNS values (the duration may be left out: 0)."""
    return event["time"], event["type"], event["name"], event["payload"], event.get("duration", 0.0)


async def append_events(conn, job_id: str, token: int, events: list[dict], now: float, first_seq: int = 0) -> int:
    """Check the lease and give events the next sequence numbers of the job's attempt; returns the
    last. With `first_seq`, a batch the attempt already holds is a repeat: nothing is appended."""
    leased_attempt = select(JOBS.c.attempt_id).where(*_live_lease(job_id, token, now)).scalar_subquery()
    expected = (ATTEMPTS.c.event_count == first_seq - 1,) if first_seq else ()
    if not events:
        row = (await conn.execute(select(ATTEMPTS.c.event_count).where(ATTEMPTS.c.id == leased_attempt))).first()
        if row is None:
            raise await _lease_failure(conn, job_id)
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
            raise await _lease_failure(conn, job_id)
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


# --------------------------------------------------------------------------- complete, release, recover


@dataclass
class Completion:
    outcome: str
    exit_code: int = 0
    error: str = ""
    artifacts: list | None = None
    score: dict | None = None
    agent_version: str = ""
    start_time: float | None = None
    agent_name: str = ""
    end_time: float | None = None
    judge_scores: list | None = None


class Completed(NamedTuple):
    attempt: Any  # Row of every attempts column
    trial: TrialInfo
    cell: CellInfo
    retry: str  # the ID of the retry attempt queued, or ""
    #: The job was done already under this token: a completion repeated after a lost answer.
    repeated: bool = False


async def complete(conn, pinned: Pinned, job_id: str, token: int, done: Completion, now: float) -> Completed:
    """Close the job's attempt; queue a retry after an infrastructure failure.
    Repeating a completion with the same token returns the first answer."""
    # The hot path is two guarded updates (three for a limited run); the
    # lookups in _repeated_completion run only when the guard did not match
    # (a repeat, a stale token, an unknown job).
    close_job = (
        update(JOBS)
        .where(*_live_lease(job_id, token, now))
        .values(state="done", last_error=done.error if done.outcome == records.INFRA_FAILED else "")
    )
    close_attempt = update(ATTEMPTS).where(ATTEMPTS.c.state != "finished").values(**closing_values(done, now))
    closed = (await conn.execute(close_job.returning(JOBS.c.attempt_id, JOBS.c.run_id))).first()
    attempt = (
        None
        if closed is None
        else (
            await conn.execute(close_attempt.where(ATTEMPTS.c.id == closed.attempt_id).returning(*ATTEMPTS.c))
        ).first()
    )
    if closed is None:
        attempt, retry = await _repeated_completion(conn, job_id, token)
    else:
        if attempt is None:
            raise FailedPrecondition(f"attempt {closed.attempt_id} is already finished")
        retry = ""
        if done.outcome == records.INFRA_FAILED:
            retry = await _maybe_retry(conn, attempt.run_id, attempt.trial_id, attempt.number, now)
        await _free_slot(conn, pinned, closed.run_id)  # last: the run row is locked until commit
    trial, cell = await pinned.trial(conn, attempt.trial_id)
    return Completed(attempt, trial, cell, retry, repeated=closed is None)


async def _repeated_completion(conn, job_id: str, token: int):
    job = (
        await conn.execute(select(JOBS.c.state, JOBS.c.lease_token, JOBS.c.attempt_id).where(JOBS.c.id == job_id))
    ).first()
    if job is None:
        raise NotFound(f"no job {job_id!r}")
    # Only a completion keeps the token of the lease it closed: recovery, release and
    # cancel close a job under a new token, so a stale token never reads as a repeat.
    if job.state == "done" and job.lease_token == token:
        attempt = (await conn.execute(select(ATTEMPTS).where(ATTEMPTS.c.id == job.attempt_id))).one()
        retry = (
            await conn.execute(
                select(ATTEMPTS.c.id).where(
                    ATTEMPTS.c.trial_id == attempt.trial_id, ATTEMPTS.c.number == attempt.number + 1
                )
            )
        ).scalar()
        return attempt, retry or ""
    raise LeaseLost(f"job {job_id}: lease lost")


def closing_values(done: Completion, now: float) -> dict:
    values = dict(
        state="finished",
        outcome=done.outcome,
        exit_code=done.exit_code,
        error=done.error,
        artifacts=done.artifacts or [],
        score=done.score,
        judge_scores=done.judge_scores,
        agent_version=done.agent_version,
        agent_name=done.agent_name,
        end_time=done.end_time or now,
    )
    if done.start_time:
        values["start_time"] = done.start_time
    values["verdict"] = verdict_of(values["outcome"], values.get("score"))
    return values


def finished_row(done: Completion, now: float) -> tuple:
    """What the hot paths (pgqueue.py, sqlitequeue.py) write to close an attempt with a result,
    in their statements' order: outcome, exit_code, error, artifacts, score, agent_version,
    end_time, start_time (None: keep it), verdict, agent_name, judge_scores; JSON as text."""
    values = closing_values(done, now)

    def text(value):
        return None if value is None else db.json_text(value)

    return (
        values["outcome"],
        values["exit_code"],
        values["error"],
        text(values["artifacts"]),
        text(values["score"]),
        values["agent_version"],
        values["end_time"],
        values.get("start_time"),
        values["verdict"],
        values["agent_name"],
        text(values["judge_scores"]),
    )


async def _close_attempt_row(conn, attempt_id: str, done: Completion, now: float, **extra):
    """Close an attempt its worker did not complete (Core); returns its trial_id and number."""
    values = closing_values(done, now)
    values.setdefault("start_time", func.coalesce(ATTEMPTS.c.start_time, now))
    row = (
        await conn.execute(
            update(ATTEMPTS)
            .where(ATTEMPTS.c.id == attempt_id, ATTEMPTS.c.state != "finished")
            .values(**values, **extra)
            .returning(ATTEMPTS.c.run_id, ATTEMPTS.c.trial_id, ATTEMPTS.c.number)
        )
    ).first()
    if row is None:
        raise FailedPrecondition(f"attempt {attempt_id} is already finished")
    return row


def _close_attempt(attempt: t.Attempt, done: Completion, now: float) -> None:
    """Close an attempt loaded through the ORM (cancel_run)."""
    if attempt.state == "finished":
        raise FailedPrecondition(f"attempt {attempt.id} is already finished")
    attempt.state, attempt.outcome = "finished", done.outcome
    attempt.exit_code, attempt.error = done.exit_code, done.error
    attempt.artifacts = done.artifacts or []
    attempt.score = done.score
    attempt.agent_version = done.agent_version
    attempt.start_time = done.start_time or attempt.start_time or now
    attempt.end_time = done.end_time or now
    attempt.verdict = verdict_of(attempt.outcome, attempt.score)


async def _maybe_retry(conn, run_id: str, trial_id: str, number: int, now: float) -> str:
    """Queue the trial's next attempt while the run's infra retry budget allows
    (released attempts do not count against it)."""
    used = (
        select(func.count())
        .select_from(ATTEMPTS)
        .where(
            ATTEMPTS.c.trial_id == trial_id, ATTEMPTS.c.outcome == records.INFRA_FAILED, ATTEMPTS.c.released.is_(False)
        )
        .scalar_subquery()
    )
    run = (
        await conn.execute(
            select(RUNS.c.cancel_requested, RUNS.c.max_infra_retries, used.label("used")).where(RUNS.c.id == run_id)
        )
    ).one()
    if run.cancel_requested or run.used > run.max_infra_retries:
        return ""
    new_attempt, new_job = records.new_attempt_rows(run_id, trial_id, number + 1, now)
    await conn.execute(ATTEMPTS.insert(), [new_attempt])
    await conn.execute(JOBS.insert(), [new_job])
    return new_attempt["id"]


async def release(conn, pinned: Pinned, job_id: str, token: int, reason: str, now: float) -> str:
    """Hand a leased job back (its worker is shutting down): the attempt closes as an
    infrastructure failure marked released and a fresh attempt is queued. Returns its ID."""
    error = f"released: {reason}"
    job = (
        await conn.execute(
            update(JOBS)
            .where(*_live_lease(job_id, token, now))
            .values(state="done", last_error=error, lease_token=JOBS.c.lease_token + 1)
            .returning(JOBS.c.attempt_id, JOBS.c.run_id)
        )
    ).first()
    if job is None:
        raise await _lease_failure(conn, job_id)
    await _free_slot(conn, pinned, job.run_id)
    attempt = await _close_attempt_row(
        conn, job.attempt_id, Completion(records.INFRA_FAILED, error=error), now, released=True
    )
    return await _maybe_retry(conn, job.run_id, attempt.trial_id, attempt.number, now)


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
        await _free_slot(conn, pinned, job.run_id)
        cancelled = (await conn.execute(select(RUNS.c.cancel_requested).where(RUNS.c.id == job.run_id))).scalar_one()
        if cancelled:
            await _close_attempt_row(conn, job.attempt_id, Completion(records.CANCELLED, error="cancelled"), now)
            continue
        attempt = await _close_attempt_row(conn, job.attempt_id, Completion(records.INFRA_FAILED, error=error), now)
        await _maybe_retry(conn, job.run_id, attempt.trial_id, attempt.number, now)
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
        await _free_slot(conn, pinned, run_id)
        await _close_attempt_row(conn, job.attempt_id, Completion(records.INFRA_FAILED, error=error), now)
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
        _close_attempt(attempt, Completion(records.CANCELLED, error="cancelled before it started"), now)
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
    await _close_attempt_row(session, job.attempt_id, Completion(records.CANCELLED, error="cancelled"), now)
    if job.state == "leased":
        await _free_slot(session, pinned, job.run_id)
    return job.attempt_id
