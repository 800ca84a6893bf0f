"""The durable job queue: claim with a lease, heartbeat, complete, cancel, recover.

A job row carries a lease (owner, fencing token, expiry). Every call about a
leased job names the token it was given; a stale token means another worker
holds the job now (or the lease expired and was reclaimed), and the call fails
with LeaseLost. The store's clock alone decides expiry.
"""

from dataclasses import dataclass
from typing import Callable

from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from services.store import records
from services.store import tables as t
from services.store.errors import FailedPrecondition, LeaseLost, NotFound

Clock = Callable[[], float]


@dataclass
class Claimed:
    job: t.Job
    attempt: t.Attempt
    trial: t.Trial
    cell: t.Cell
    run: t.Run
    task: t.Task
    harness: t.Harness


async def claim(session: AsyncSession, worker: str, lease_secs: float, now: float, run_id: str = "",
                recover: bool = True) -> Claimed | None:
    """Lease the oldest eligible job; None when the queue has nothing for us.

    A job is eligible when queued and its run has a free slot (runs.leased below
    its concurrency). The slot is taken by a guarded update of the run row, so a
    run's concurrency holds across every worker. On PostgreSQL SKIP LOCKED lets
    racing claimers pass over each other's job rows; on SQLite BEGIN IMMEDIATE
    serializes them.
    """
    if recover:
        await recover_expired(session, now)
    pick = (select(t.Job.id, t.Job.run_id, t.Job.attempt_id, t.Run.limited).join(t.Run, t.Run.id == t.Job.run_id)
            .where(t.Job.state == "queued", ~t.Run.limited | (t.Run.leased < t.Run.concurrency))
            .order_by(t.Job.create_time, t.Job.id).limit(1).with_for_update(of=t.Job, skip_locked=True))
    if run_id:
        pick = pick.where(t.Job.run_id == run_id)
    row = (await session.execute(pick)).first()
    if row is None:
        return None
    await session.execute(
        update(t.Job).where(t.Job.id == row.id, t.Job.state == "queued")
        .values(state="leased", lease_owner=worker, lease_token=t.Job.lease_token + 1,
                lease_expire_time=now + lease_secs, try_count=t.Job.try_count + 1)
        .execution_options(synchronize_session=False))
    await session.execute(update(t.Attempt).where(t.Attempt.id == row.attempt_id)
                          .values(state="running", start_time=now).execution_options(synchronize_session=False))
    if row.limited:
        # Last, so the run row stays locked for one statement and the commit.
        slot = await session.execute(update(t.Run).where(t.Run.id == row.run_id, t.Run.leased < t.Run.concurrency)
                                     .values(leased=t.Run.leased + 1).returning(t.Run.id))
        if slot.scalar_one_or_none() is None:
            raise NoSlot(row.run_id)
    found = (await session.execute(
        select(t.Job, t.Attempt, t.Trial, t.Cell, t.Run, t.Task, t.Harness)
        .join(t.Attempt, t.Attempt.id == t.Job.attempt_id).join(t.Trial, t.Trial.id == t.Attempt.trial_id)
        .join(t.Cell, t.Cell.id == t.Trial.cell_id).join(t.Run, t.Run.id == t.Job.run_id)
        .join(t.Task, t.Task.digest == t.Trial.task_digest).join(t.Harness, t.Harness.digest == t.Cell.harness_digest)
        .where(t.Job.id == row.id).execution_options(populate_existing=True))).one()
    return Claimed(*found)


class NoSlot(Exception):
    """Another worker took the run's last slot first: roll the claim back and ask again."""


def _free_slot(run_id: str):
    """The run's lease count, one down (every path that ends a lease runs it)."""
    return (update(t.Run).where(t.Run.id == run_id, t.Run.limited, t.Run.leased > 0)
            .values(leased=t.Run.leased - 1))


async def heartbeat(session: AsyncSession, job_id: str, token: int, lease_secs: float,
                    now: float) -> tuple[float, bool]:
    """Extend the lease; returns (new expiry, cancel requested)."""
    expire = now + lease_secs
    result = await session.execute(
        update(t.Job).where(t.Job.id == job_id, t.Job.lease_token == token, t.Job.state == "leased",
                            t.Job.lease_expire_time >= now)
        .values(lease_expire_time=expire).returning(t.Job.run_id))
    run_id = result.scalar_one_or_none()
    if run_id is None:
        raise LeaseLost(f"job {job_id}: lease lost")
    run = await session.get(t.Run, run_id)
    return expire, run.cancel_requested


async def check_lease(session: AsyncSession, job_id: str, token: int, now: float) -> t.Job:
    job = await session.get(t.Job, job_id)
    if job is None:
        raise NotFound(f"no job {job_id!r}")
    if job.state != "leased" or job.lease_token != token or job.lease_expire_time < now:
        raise LeaseLost(f"job {job_id}: lease lost")
    return job


@dataclass
class Completion:
    outcome: str
    exit_code: int = 0
    error: str = ""
    artifacts: list | None = None
    score: dict | None = None
    agent_version: str = ""
    start_time: float | None = None
    end_time: float | None = None


async def complete(session: AsyncSession, job_id: str, token: int, done: Completion,
                   now: float) -> tuple[str, str]:
    """Close the job's attempt; queue a retry after an infrastructure failure.

    Returns the attempt's ID and the ID of the retry attempt ("" when none).
    Repeating a completion with the same token returns the first answer.
    """
    # The hot path is three guarded updates; the lookups below run only when
    # the guard did not match (a repeat, a stale token, an unknown job).
    closed = (await session.execute(
        update(t.Job).where(t.Job.id == job_id, t.Job.lease_token == token, t.Job.state == "leased",
                            t.Job.lease_expire_time >= now)
        .values(state="done", last_error=done.error if done.outcome == records.INFRA_FAILED else "")
        .returning(t.Job.attempt_id, t.Job.run_id))).first()
    if closed is None:
        return await _repeated_completion(session, job_id, token, now)
    result = await session.execute(
        update(t.Attempt).where(t.Attempt.id == closed.attempt_id, t.Attempt.state != "finished")
        .values(**_closing_values(done, now)).returning(t.Attempt.id))
    if result.first() is None:
        raise FailedPrecondition(f"attempt {closed.attempt_id} is already finished")
    retry = ""
    if done.outcome == records.INFRA_FAILED:
        retry = await _maybe_retry(session, await session.get(t.Attempt, closed.attempt_id), now)
    await session.execute(_free_slot(closed.run_id))  # last: the run row is locked until commit
    return closed.attempt_id, retry


async def _repeated_completion(session: AsyncSession, job_id: str, token: int, now: float) -> tuple[str, str]:
    job = await session.get(t.Job, job_id)
    if job is None:
        raise NotFound(f"no job {job_id!r}")
    if job.state == "done" and job.lease_token == token:
        attempt = await session.get(t.Attempt, job.attempt_id)
        return attempt.id, await _retry_of(session, attempt)
    raise LeaseLost(f"job {job_id}: lease lost")


def _closing_values(done: Completion, now: float) -> dict:
    values = dict(state="finished", outcome=done.outcome, exit_code=done.exit_code, error=done.error,
                  artifacts=done.artifacts or [], score=done.score, agent_version=done.agent_version,
                  end_time=done.end_time or now)
    if done.start_time:
        values["start_time"] = done.start_time
    values["verdict"] = records.verdict(records.AttemptView(**values))
    return values


def _close_attempt(attempt: t.Attempt, done: Completion, now: float) -> None:
    if attempt.state == "finished":
        raise FailedPrecondition(f"attempt {attempt.id} is already finished")
    attempt.state, attempt.outcome = "finished", done.outcome
    attempt.exit_code, attempt.error = done.exit_code, done.error
    attempt.artifacts = done.artifacts or []
    attempt.score = done.score
    attempt.agent_version = done.agent_version
    attempt.start_time = done.start_time or attempt.start_time or now
    attempt.end_time = done.end_time or now
    attempt.verdict = records.verdict(attempt)


async def _maybe_retry(session: AsyncSession, attempt: t.Attempt, now: float) -> str:
    """Queue the trial's next attempt while the run's infra retry budget allows
    (released attempts do not count against it)."""
    run = await session.get(t.Run, attempt.run_id)
    used = (await session.execute(select(func.count()).select_from(t.Attempt).where(
        t.Attempt.trial_id == attempt.trial_id, t.Attempt.outcome == records.INFRA_FAILED,
        t.Attempt.released.is_(False)))).scalar_one()
    if run.cancel_requested or used > run.max_infra_retries:
        return ""
    new_attempt, new_job = records.new_attempt_rows(run.id, attempt.trial_id, attempt.number + 1, now)
    await session.execute(t.Attempt.__table__.insert(), [new_attempt])
    await session.execute(t.Job.__table__.insert(), [new_job])
    return new_attempt["id"]


async def _retry_of(session: AsyncSession, attempt: t.Attempt) -> str:
    query = select(t.Attempt.id).where(t.Attempt.trial_id == attempt.trial_id,
                                       t.Attempt.number == attempt.number + 1)
    return (await session.execute(query)).scalar_one_or_none() or ""


async def release(session: AsyncSession, job_id: str, token: int, reason: str, now: float) -> str:
    """Hand a leased job back (its worker is shutting down): the attempt closes as an
    infrastructure failure marked released and a fresh attempt is queued. Returns its ID."""
    job = await check_lease(session, job_id, token, now)
    job.state, job.last_error = "done", f"released: {reason}"
    await session.execute(_free_slot(job.run_id))
    attempt = await session.get(t.Attempt, job.attempt_id)
    attempt.released = True
    _close_attempt(attempt, Completion(records.INFRA_FAILED, error=job.last_error), now)
    return await _maybe_retry(session, attempt, now)


async def recover_expired(session: AsyncSession, now: float, limit: int = 100) -> int:
    """Close attempts whose worker stopped heartbeating as infra failures (worker lost)."""
    query = (select(t.Job).where(t.Job.state == "leased", t.Job.lease_expire_time < now)
             .order_by(t.Job.lease_expire_time).limit(limit).with_for_update(skip_locked=True))
    jobs = list((await session.execute(query)).scalars())
    for job in jobs:
        job.state = "done"
        job.last_error = f"worker lost: {job.lease_owner} stopped heartbeating"
        await session.execute(_free_slot(job.run_id))
        attempt = await session.get(t.Attempt, job.attempt_id)
        run = await session.get(t.Run, job.run_id)
        if run.cancel_requested:
            _close_attempt(attempt, Completion(records.CANCELLED, error="cancelled"), now)
            continue
        _close_attempt(attempt, Completion(records.INFRA_FAILED, error=job.last_error), now)
        await _maybe_retry(session, attempt, now)
    return len(jobs)


async def cancel_run(session: AsyncSession, run: t.Run, now: float) -> int:
    """Mark the run cancelled and close its queued attempts; leased ones stop on heartbeat."""
    run.cancel_requested = True
    queued = list((await session.execute(
        select(t.Job).where(t.Job.run_id == run.id, t.Job.state == "queued"))).scalars())
    for job in queued:
        job.state = "done"
        attempt = await session.get(t.Attempt, job.attempt_id)
        _close_attempt(attempt, Completion(records.CANCELLED, error="cancelled before it started"), now)
    return len(queued)
