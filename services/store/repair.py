"""Resume and repair: queue again the trials of a run whose latest attempt has no usable score.

A trial is queued again only for a reason HEMRA itself is to blame for, or a cancellation:

- cancelled: its latest attempt was cancelled (the run or the trial);
- infra: its latest attempt failed for the infrastructure (released and "worker lost" ones too);
- scorer: its latest attempt ran but the scorer left no usable score.

A trial whose latest attempt was scored (passed or failed, the harness failed or timed out
included) is a result and is never queued again. Resume is for a cancelled or interrupted
run: cancelled trials, and those whose worker died under them (a lease that expired is closed
here first, as recovery would). Each new attempt is the trial's next, under the same run, so
its earlier attempts stay beside it and the report reads the latest.

Two repairs at once must queue each trial once: the run's row is locked first (FOR UPDATE on
PostgreSQL; on SQLite every write transaction already holds the database's write lock), and
the latest attempts are read after it, so the second repair sees the first's queued attempts.
"""

from collections import defaultdict
from dataclasses import dataclass, field

from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased

from hemra.services.common.errors import FailedPrecondition, InvalidArgument
from hemra.services.domain import vocabulary
from hemra.services.store import pinned, queue, records, runreads
from hemra.services.store import tables as t

#: Why a trial may be queued again (RepairRunRequest.reasons).
REASONS = ("infra", "scorer", "cancelled")
#: How errors of attempts closed because their worker died begin (queue.recover_expired, release).
WORKER_DIED = ("worker lost", "released")
MAX_REQUESTED_BY = 300
MAX_CHANGES = 1000


@dataclass
class Requeued:
    trial_id: str
    dataset_name: str
    harness_name: str
    task_name: str
    repetition: int
    reason: str
    earlier_attempts: int
    attempt_id: str = ""
    expected_cost_usd: float | None = None


@dataclass
class Outcome:
    """What a resume or repair queued (or would queue), and what it left alone."""

    trials: list[Requeued] = field(default_factory=list)
    already_queued: int = 0
    still_running: int = 0
    repair: t.RunRepair | None = None

    @property
    def expected_cost_usd(self) -> float:
        return sum(r.expected_cost_usd for r in self.trials if r.expected_cost_usd is not None)

    @property
    def cost_known(self) -> int:
        return sum(r.expected_cost_usd is not None for r in self.trials)


def reasons_of(asked: list[str]) -> tuple[str, ...]:
    """The reasons a repair asks for, checked; none means all three."""
    unknown = [r for r in asked if r not in REASONS]
    if unknown:
        raise InvalidArgument(f"repair reason {runreads.shown(unknown[0])}: expected one of {', '.join(REASONS)}")
    return tuple(r for r in REASONS if r in asked) or REASONS


def changes_of(changes: list[dict]) -> list[dict]:
    """Allowed changes as recorded: three short strings each, checked."""
    if len(changes) > MAX_CHANGES:
        raise InvalidArgument(f"{len(changes)} allowed changes: at most {MAX_CHANGES}")
    kept = []
    for change in changes:
        row = {key: str(change.get(key, "")) for key in ("what", "pinned", "current")}
        if not row["what"] or any(len(value) > 300 for value in row.values()):
            raise InvalidArgument("an allowed change needs what changed, in at most 300 characters each")
        kept.append(row)
    return kept


def reason_for(state: str, outcome: str | None, verdict: str | None, error: str, resume: bool) -> str:
    """Why a trial whose latest attempt is this one may be queued again ("" when it may not)."""
    if state != vocabulary.FINISHED:
        return ""
    if outcome == vocabulary.CANCELLED or verdict == vocabulary.CANCELLED:
        return "cancelled"
    if outcome == vocabulary.INFRA_FAILED:
        if resume and not (error or "").startswith(WORKER_DIED):
            return ""  # a failure of its own, past its retries: `hemra repair --infra`
        return "infra"
    if resume:
        return ""
    if verdict in (vocabulary.PASSED, vocabulary.FAILED):
        return ""  # scored: a result, whatever the agent did
    return "scorer"  # ran, but no usable score (errored, or a verdict HEMRA does not know)


async def requeue(
    session: AsyncSession,
    pinned: pinned.Pinned,
    run: t.Run,
    kind: str,
    reasons: tuple[str, ...],
    now: float,
    dry_run: bool = False,
    requested_by: str = "",
    allowed_changes: list[dict] | None = None,
) -> Outcome:
    """Queue again each trial of `run` whose latest attempt has no usable score for `reasons`
    (kind resume or repair), in the caller's transaction, and record it."""
    if run.kind != "run":
        raise FailedPrecondition(f"{run.id} is an import: nothing of it runs here, so it cannot be {kind}d")
    if not dry_run:
        # The lock first, then every read: see the module's docstring.
        await session.execute(select(t.Run.id).where(t.Run.id == run.id).with_for_update())
        if kind == "resume":
            await queue.recover_run(session, pinned, run.id, now)
    found = await _latest_attempts(session, run.id)
    costs = await _costs(session, run.id)
    done = Outcome()
    for row in found:
        if row.state == "queued":
            done.already_queued += 1
            continue
        if row.state != vocabulary.FINISHED:
            done.still_running += 1
            continue
        reason = reason_for(row.state, row.outcome, row.verdict, row.error, kind == "resume")
        if reason not in reasons:
            continue
        done.trials.append(
            Requeued(
                row.trial_id,
                row.dataset_name,
                row.harness_name,
                row.task_name,
                row.repetition,
                reason,
                row.number,
                expected_cost_usd=costs.get(row.trial_id, costs.get(row.cell_id)),
            )
        )
    if dry_run or not done.trials:
        return done
    await _queue(session, run, done.trials, now)
    done.repair = t.RunRepair(
        run_id=run.id,
        kind=kind,
        requested_by=requested_by[:MAX_REQUESTED_BY],
        create_time=now,
        reasons=sorted({r.reason for r in done.trials}, key=REASONS.index) if kind == "resume" else list(reasons),
        queued=len(done.trials),
        allowed_changes=allowed_changes or [],
    )
    session.add(done.repair)
    await session.flush()
    return done


async def _latest_attempts(session: AsyncSession, run_id: str):
    """Each trial of the run with its latest attempt, in the run's order."""
    newer = aliased(t.Attempt)
    latest = ~select(newer.id).where(newer.trial_id == t.Attempt.trial_id, newer.number > t.Attempt.number).exists()
    query = (
        select(
            t.Trial.id.label("trial_id"),
            t.Trial.cell_id,
            t.Trial.task_name,
            t.Trial.repetition,
            t.Cell.dataset_name,
            t.Cell.harness_name,
            t.Attempt.number,
            t.Attempt.state,
            t.Attempt.outcome,
            t.Attempt.verdict,
            t.Attempt.error,
        )
        .join(t.Trial, t.Trial.id == t.Attempt.trial_id)
        .join(t.Cell, t.Cell.id == t.Trial.cell_id)
        .where(t.Attempt.run_id == run_id, latest)
        .order_by(t.Cell.position, t.Trial.task_name, t.Trial.repetition)
    )
    return (await session.execute(query)).all()


async def _costs(session: AsyncSession, run_id: str) -> dict[str, float]:
    """Mean model cost of the attempts that reported usage, by trial ID and by cell ID."""
    query = (
        select(t.Trial.id, t.Trial.cell_id, func.sum(t.Attempt.cost_usd), func.count())
        .join(t.Trial, t.Trial.id == t.Attempt.trial_id)
        .where(t.Attempt.run_id == run_id, t.Attempt.usage_events > 0)
        .group_by(t.Trial.id, t.Trial.cell_id)
    )
    costs: dict[str, float] = {}
    cells: dict[str, list[float]] = defaultdict(lambda: [0.0, 0])
    for trial_id, cell_id, total, count in (await session.execute(query)).all():
        costs[trial_id] = float(total or 0) / count
        cells[cell_id][0] += float(total or 0)
        cells[cell_id][1] += count
    costs.update({cell_id: total / count for cell_id, (total, count) in cells.items()})
    return costs


async def _queue(session: AsyncSession, run: t.Run, trials: list[Requeued], now: float) -> None:
    """A new attempt and job per trial; the run is no longer cancelled, and its settled rows
    and reports (kept at its judge_version) are read again."""
    attempts, jobs = [], []
    for trial in trials:
        attempt, job = records.new_attempt_rows(run.id, trial.trial_id, trial.earlier_attempts + 1, now)
        trial.attempt_id = attempt["id"]
        attempts.append(attempt)
        jobs.append(job)
    await session.execute(pinned.ATTEMPTS.insert(), attempts)
    await session.execute(pinned.JOBS.insert(), jobs)
    await session.execute(
        update(t.Run)
        .where(t.Run.id == run.id)
        .values(cancel_requested=False, judge_version=t.Run.judge_version + 1)
        .execution_options(synchronize_session=False)
    )


async def repairs_of(session: AsyncSession, run_id: str) -> list[t.RunRepair]:
    query = select(t.RunRepair).where(t.RunRepair.run_id == run_id).order_by(t.RunRepair.id)
    return list((await session.execute(query)).scalars())


async def trials_by_attempts(session: AsyncSession, run_id: str) -> dict[int, int]:
    """How many trials of the run took 1, 2, ... attempts."""
    per_trial = (
        select(func.count().label("attempts"))
        .select_from(t.Attempt)
        .where(t.Attempt.run_id == run_id)
        .group_by(t.Attempt.trial_id)
        .subquery()
    )
    query = select(per_trial.c.attempts, func.count()).group_by(per_trial.c.attempts)
    return {int(attempts): int(trials) for attempts, trials in (await session.execute(query)).all()}
