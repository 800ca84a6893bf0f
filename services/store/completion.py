"""Completing a leased job: the attempt closed with its outcome, score and verdict, the run's
slot freed, and an infrastructure failure retried while the run allows (queue.py leases)."""

from dataclasses import dataclass
from typing import NamedTuple

from sqlalchemy import func, select, update

from hemra.services.common.errors import FailedPrecondition, LeaseLost, NotFound
from hemra.services.domain import vocabulary
from hemra.services.domain.records import AttemptInfo
from hemra.services.domain.rewards import verdict as verdict_of
from hemra.services.store import db, records
from hemra.services.store import tables as t
from hemra.services.store.leases import free_slot, live_lease
from hemra.services.store.pinned import ATTEMPTS, JOBS, RUNS, CellInfo, Pinned, TrialInfo

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
    attempt: AttemptInfo
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
        .where(*live_lease(job_id, token, now))
        .values(state="done", last_error=done.error if done.outcome == vocabulary.INFRA_FAILED else "")
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
        if done.outcome == vocabulary.INFRA_FAILED:
            retry = await maybe_retry(conn, attempt.run_id, attempt.trial_id, attempt.number, now)
        await free_slot(conn, pinned, closed.run_id)  # last: the run row is locked until commit
    trial, cell = await pinned.settled_trial(conn, attempt.trial_id)
    return Completed(AttemptInfo.of(attempt), trial, cell, retry, repeated=closed is None)


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


async def close_attempt_row(conn, attempt_id: str, done: Completion, now: float, **extra):
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


def close_attempt(attempt: t.Attempt, done: Completion, now: float) -> None:
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


async def maybe_retry(conn, run_id: str, trial_id: str, number: int, now: float) -> str:
    """Queue the trial's next attempt while the run's infra retry budget allows
    (released attempts do not count against it)."""
    used = (
        select(func.count())
        .select_from(ATTEMPTS)
        .where(
            ATTEMPTS.c.trial_id == trial_id,
            ATTEMPTS.c.outcome == vocabulary.INFRA_FAILED,
            ATTEMPTS.c.released.is_(False),
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
