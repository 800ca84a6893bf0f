"""The durable job queue: claim with a lease, heartbeat, complete, cancel, recover.

A job row carries a lease (owner, fencing token, expiry). Every call about a
leased job names the token it was given; a stale token means another worker
holds the job now (or the lease expired and was reclaimed), and the call fails
with LeaseLost. The store's clock alone decides expiry.
"""

from dataclasses import dataclass
from typing import Callable

from sqlalchemy import and_, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased

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


async def _has_capacity(session: AsyncSession, run_id: str, now: float) -> bool:
    """Recount the run's live leases while holding its row: concurrent claimers of one
    run wait here in turn, so a run's concurrency holds across every worker."""
    run = (await session.execute(select(t.Run).where(t.Run.id == run_id).with_for_update())).scalar_one()
    live = (await session.execute(select(func.count()).select_from(t.Job).where(
        t.Job.run_id == run_id, t.Job.state == "leased", t.Job.lease_expire_time > now))).scalar_one()
    return live < run.concurrency


def _eligible(now: float):
    """Queued jobs of runs below their concurrency (counting live leases of every worker)."""
    busy = aliased(t.Job)
    running = (select(func.count()).select_from(busy)
               .where(busy.run_id == t.Job.run_id, busy.state == "leased",
                      busy.lease_expire_time > now).scalar_subquery())
    concurrency = select(t.Run.concurrency).where(t.Run.id == t.Job.run_id).scalar_subquery()
    return and_(t.Job.state == "queued", running < concurrency)


async def claim(session: AsyncSession, worker: str, lease_secs: float, now: float,
                run_id: str = "") -> Claimed | None:
    """Lease the oldest eligible job; None when the queue has nothing for us."""
    await recover_expired(session, now)
    pick = select(t.Job.id, t.Job.run_id).where(_eligible(now)).order_by(t.Job.create_time, t.Job.id).limit(1)
    if run_id:
        pick = pick.where(t.Job.run_id == run_id)
    # PostgreSQL: SKIP LOCKED lets racing claimers pass over each other's rows.
    # SQLite ignores it; there BEGIN IMMEDIATE serializes claimers and the
    # UPDATE's WHERE repeats the state test, a compare-and-set.
    row = (await session.execute(pick.with_for_update(skip_locked=True))).first()
    if row is None:
        return None
    if session.bind.dialect.name == "postgresql" and not await _has_capacity(session, row.run_id, now):
        return None
    result = await session.execute(
        update(t.Job).where(t.Job.id == row.id, t.Job.state == "queued")
        .values(state="leased", lease_owner=worker, lease_token=t.Job.lease_token + 1,
                lease_expire_time=now + lease_secs, try_count=t.Job.try_count + 1)
        .returning(t.Job.id).execution_options(synchronize_session=False))
    job_id = result.scalar_one_or_none()
    if job_id is None:
        return None
    job = await session.get(t.Job, job_id, populate_existing=True)
    attempt = await session.get(t.Attempt, job.attempt_id)
    attempt.state, attempt.start_time = "running", now
    trial = await session.get(t.Trial, attempt.trial_id)
    return Claimed(job, attempt, trial, await session.get(t.Cell, trial.cell_id),
                   await session.get(t.Run, job.run_id))


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
                   now: float) -> tuple[t.Attempt, str]:
    """Close the job's attempt; queue a retry after an infrastructure failure.

    Returns the attempt and the ID of the retry attempt ("" when none).
    Repeating a completion with the same token returns the first answer.
    """
    job = await session.get(t.Job, job_id)
    if job is None:
        raise NotFound(f"no job {job_id!r}")
    if job.state == "done" and job.lease_token == token:
        attempt = await session.get(t.Attempt, job.attempt_id)
        return attempt, await _retry_of(session, attempt)
    await check_lease(session, job_id, token, now)
    job.state = "done"
    attempt = await session.get(t.Attempt, job.attempt_id)
    _close_attempt(attempt, done, now)
    retry = ""
    if done.outcome == records.INFRA_FAILED:
        job.last_error = done.error
        retry = await _maybe_retry(session, attempt, now)
    return attempt, retry


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
