"""Reads of attempts: a run's attempts filtered and paged, one attempt, its judge scores (no
gRPC here)."""

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from hemra.services.common.errors import InvalidArgument, NotFound
from hemra.services.domain import vocabulary
from hemra.services.domain.ids import kind_of
from hemra.services.domain.records import AttemptRead
from hemra.services.store import pagetokens, sqlrows
from hemra.services.store import tables as t
from hemra.services.store.runreads import shown

#: Verdict filters of list_attempts: a verdict, or unfinished (queued or running).
VERDICTS = (*vocabulary.VERDICTS, "unfinished")


async def list_attempts(
    session: AsyncSession, run_id: str, page_size: int, page_token: str, filters: dict | None = None
) -> tuple[list[AttemptRead], str]:
    """A run's attempts in ID order (keyset paging), optionally only those matching `filters`
    (cell_id, task_digest, harness_name, verdict, task_tag)."""
    page_size = page_size if 0 < page_size <= 1000 else 1000
    query = (
        select(t.Attempt, t.Trial, t.Cell)
        .join(t.Trial, t.Attempt.trial_id == t.Trial.id)
        .join(t.Cell, t.Trial.cell_id == t.Cell.id)
        .where(t.Attempt.run_id == run_id)
        .order_by(t.Attempt.id)
        .limit(page_size + 1)
    )
    query = _filter_attempts(query, filters or {})
    if (filters or {}).get("task_tag"):
        query = query.where(t.Trial.task_digest.in_(await _tagged_tasks(session, run_id, filters["task_tag"])))
    if page_token:
        query = query.where(t.Attempt.id > pagetokens.after_attempt(page_token))
    rows = [sqlrows.attempt_read(*row) for row in (await session.execute(query)).all()]
    more = len(rows) > page_size
    rows = rows[:page_size]
    return rows, (pagetokens.attempts_token(rows[-1].attempt.id) if more else "")


async def _tagged_tasks(session: AsyncSession, run_id: str, tag: str) -> list[str]:
    """The digests of the run's tasks carrying `tag` (Task.tags)."""
    run_tasks = select(t.Trial.task_digest).where(t.Trial.run_id == run_id).distinct()
    rows = await session.execute(select(t.Task.digest, t.Task.record).where(t.Task.digest.in_(run_tasks)))
    return [digest for digest, record in rows if isinstance(record, dict) and tag in (record.get("tags") or ())]


def _filter_attempts(query, filters: dict):
    if filters.get("cell_id"):
        query = query.where(t.Trial.cell_id == filters["cell_id"])
    if filters.get("task_digest"):
        query = query.where(t.Trial.task_digest == filters["task_digest"])
    if filters.get("harness_name"):
        query = query.where(t.Cell.harness_name == filters["harness_name"])
    verdict_ = filters.get("verdict", "")
    finished = t.Attempt.state == vocabulary.FINISHED
    if verdict_ == "unfinished":
        query = query.where(t.Attempt.state.in_([s for s in vocabulary.STATES if s != vocabulary.FINISHED]))
    elif verdict_ == vocabulary.ERRORED:
        # As runs_progress counts them: a state or verdict HEMRA does not know counts as errored.
        unknown_verdict = t.Attempt.verdict.is_(None) | t.Attempt.verdict.not_in(vocabulary.VERDICTS)
        query = query.where(
            (finished & ((t.Attempt.verdict == verdict_) | unknown_verdict))
            | t.Attempt.state.not_in(list(vocabulary.STATES))
        )
    elif verdict_ in VERDICTS:
        query = query.where(finished, t.Attempt.verdict == verdict_)
    elif verdict_:
        raise InvalidArgument(f"verdict {verdict_!r}: expected one of {', '.join(VERDICTS)}")
    return query


async def get_attempt(session: AsyncSession, attempt_id: str) -> AttemptRead:
    """An attempt by its ID, or by the ID of the job that works it."""
    attempt_id = attempt_id.rpartition("/")[2]
    if kind_of(attempt_id) == "job":
        job = await session.get(t.Job, attempt_id)
        if job is None:
            raise NotFound(f"no job {shown(attempt_id)}")
        attempt_id = job.attempt_id
    row = (
        await session.execute(
            select(t.Attempt, t.Trial, t.Cell)
            .join(t.Trial, t.Attempt.trial_id == t.Trial.id)
            .join(t.Cell, t.Trial.cell_id == t.Cell.id)
            .where(t.Attempt.id == attempt_id)
        )
    ).first()
    if row is None:
        raise NotFound(f"no attempt {shown(attempt_id)}")
    return sqlrows.attempt_read(*row)


def judge_scores_of(value) -> list[dict]:
    """An attempt's judge_scores column (decoded JSON, oldest first): its scores that name a judge,
    anything malformed left out (a restored export is checked, but reads never trust a row)."""
    if not isinstance(value, list):
        return []
    return [s for s in value if isinstance(s, dict) and isinstance(s.get("judge"), str) and s["judge"]]


def latest_judge_scores(value) -> dict[str, dict]:
    """Each HEMRA judge's latest score of an attempt, by judge name."""
    return {s["judge"]: s for s in judge_scores_of(value)}


async def lock_attempts(session: AsyncSession, attempt_ids: list[str]) -> dict[str, t.Attempt]:
    """Attempts by ID, their rows locked for update until the transaction ends."""
    ids = sorted({a.rpartition("/")[2] for a in attempt_ids})
    found = {
        a.id: a
        for a in (await session.execute(select(t.Attempt).where(t.Attempt.id.in_(ids)).with_for_update())).scalars()
    }
    missing = [i for i in ids if i not in found]
    if missing:
        raise NotFound(f"no attempt {shown(missing[0])}")
    return found


async def judged(session: AsyncSession, run_ids: set[str]) -> None:
    """Say that HEMRA judge scores were added to these runs' attempts (Run.judge_version)."""
    await session.execute(
        update(t.Run).where(t.Run.id.in_(sorted(run_ids))).values(judge_version=t.Run.judge_version + 1)
    )
