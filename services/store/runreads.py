"""Reads of runs: find one by reference, page through them, and count their progress (no
gRPC here)."""

import functools

from sqlalchemy import bindparam, exists, func, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased

from hemra.services.common.errors import InvalidArgument, NotFound
from hemra.services.domain import vocabulary
from hemra.services.domain.ids import kind_of
from hemra.services.store import pagetokens
from hemra.services.store import tables as t
from hemra.services.store.outputs import ImportProvenance


def refuse_loose(run: t.Run, what: str) -> None:
    """A loose attempt (`hemra try`) is for looking at one attempt: never in a report or compare."""
    if run.kind == "loose":
        raise InvalidArgument(
            f"{run.label} ({run.id}) is a loose attempt (hemra try): loose attempts are never in {what}; "
            f"hemra show {run.id} shows it"
        )


def shown(ref: str, limit: int = 200, quote: bool = True) -> str:
    """A reference as an error message quotes it: a 100,000-character one is cut."""
    cut = ref if len(ref) <= limit else ref[:limit]
    return (repr(cut) if quote else cut) + ("" if cut is ref else f"... ({len(ref)} characters)")


def provenance(run: t.Run) -> ImportProvenance:
    """How an import came into this store, as the store recorded it."""
    return ImportProvenance(
        export_digest=run.export_digest or "",
        imported_by=run.imported_by or "",
        import_time=run.import_time,
        original_id=run.original_id or "",
        original_kind=run.original_kind or "",
        original_label=run.original_label or "",
    )


async def run_of_request(session: AsyncSession, request_id: str) -> t.Run | None:
    """The run recorded for a client's request ID, if any."""
    return (await session.execute(select(t.Run).where(t.Run.request_id == request_id))).scalar_one_or_none()


async def find_run(session: AsyncSession, ref: str) -> t.Run:
    """A run or import by ID (an exported run's ID finds the import it became here), else the
    newest one with that label."""
    ref = ref.removeprefix("runs/")
    if kind_of(ref) in ("run", "import"):
        run = await session.get(t.Run, ref)
        if run is None and kind_of(ref) == "run":
            run = (await session.execute(select(t.Run).where(t.Run.original_id == ref).limit(1))).scalar_one_or_none()
        if run is not None:
            return run
    run = (
        await session.execute(
            select(t.Run).where(t.Run.label == ref).order_by(t.Run.create_time.desc(), t.Run.id.desc()).limit(1)
        )
    ).scalar_one_or_none()
    if run is None:
        raise NotFound(f"no run or import with ID or label {shown(ref)}")
    return run


async def label_matches(session: AsyncSession, ref: str, run: t.Run) -> int:
    """How many runs and imports carry `ref` as their label, when `ref` found `run` by a label
    more than one carries (the newest was taken, and commands say so); else 0."""
    ref = ref.removeprefix("runs/")
    if ref in (run.id, run.original_id) or run.label != ref:
        return 0
    count = (await session.execute(select(func.count()).select_from(t.Run).where(t.Run.label == ref))).scalar_one()
    return count if count > 1 else 0


async def list_runs(session: AsyncSession, page_size: int, page_token: str, kind: str = "") -> tuple[list[t.Run], str]:
    """Runs and imports (or only `kind`), newest first; the page token is the last (time, ID)
    returned (keyset paging)."""
    page_size = page_size if 0 < page_size <= 1000 else 100
    query = select(t.Run).order_by(t.Run.create_time.desc(), t.Run.id.desc()).limit(page_size + 1)
    if kind:
        if kind not in ("run", "import", "loose"):
            raise InvalidArgument(f"kind {kind!r}: expected run, import or loose")
        query = query.where(t.Run.kind == kind)
    if page_token:
        after, last_id = pagetokens.after_run(page_token)
        query = query.where((t.Run.create_time < after) | ((t.Run.create_time == after) & (t.Run.id < last_id)))
    runs = list((await session.execute(query)).scalars())
    more = len(runs) > page_size
    runs = runs[:page_size]
    return runs, (pagetokens.runs_token(runs[-1].create_time, runs[-1].id) if more else "")


async def cells_of(session: AsyncSession, run_id: str) -> list[t.Cell]:
    query = select(t.Cell).where(t.Cell.run_id == run_id).order_by(t.Cell.position)
    return list((await session.execute(query)).scalars())


#: Unfinished jobs ListRuns names per run (Run.open_jobs); the progress counts them all.
MAX_OPEN_JOBS = 20


async def job_ids(session: AsyncSession, attempt_ids: list[str]) -> dict[str, str]:
    """The ID of the job that works each attempt (imported attempts have none)."""
    if not attempt_ids:
        return {}
    query = select(t.Job.attempt_id, t.Job.id).where(t.Job.attempt_id.in_(attempt_ids))
    return {attempt_id: job_id for attempt_id, job_id in (await session.execute(query)).all()}


async def open_jobs(session: AsyncSession, run_ids: list[str]) -> dict[str, list[dict]]:
    """Each run's unfinished jobs (queued or leased), oldest first, at most MAX_OPEN_JOBS a run,
    in one query (a window numbers each run's jobs, so a run of 100,000 queued reads 20)."""
    found: dict[str, list[dict]] = {run_id: [] for run_id in run_ids}
    if not run_ids:
        return found
    place = func.row_number().over(partition_by=t.Job.run_id, order_by=(t.Job.create_time, t.Job.id)).label("place")
    numbered = (
        select(t.Job.run_id, t.Job.id, t.Job.attempt_id, t.Job.state, place)
        .where(t.Job.run_id.in_(run_ids), t.Job.state.in_(("queued", "leased")))
        .subquery()
    )
    query = (
        select(numbered.c.run_id, numbered.c.id, numbered.c.attempt_id, numbered.c.state, t.Cell, t.Trial)
        .join(t.Attempt, t.Attempt.id == numbered.c.attempt_id)
        .join(t.Trial, t.Attempt.trial_id == t.Trial.id)
        .join(t.Cell, t.Trial.cell_id == t.Cell.id)
        .where(numbered.c.place <= MAX_OPEN_JOBS)
        .order_by(numbered.c.run_id, numbered.c.place)
    )
    for run_id, job_id, attempt_id, state, cell, trial in (await session.execute(query)).all():
        found[run_id].append(
            dict(
                id=job_id,
                attempt_id=attempt_id,
                state=state,
                dataset_name=cell.dataset_name,
                harness_name=cell.harness_name,
                task_name=trial.task_name,
                repetition=trial.repetition,
            )
        )
    return found


def _empty_progress() -> dict[str, int]:
    return dict(trials=0, queued=0, running=0, done=0, passed=0, failed=0, errored=0, cancelled=0, unreadable=0)


async def run_progress(session: AsyncSession, run_id: str) -> tuple[dict[str, int], dict[str, dict[str, int]]]:
    """Counts over each trial's latest attempt, for the run and per cell, in one aggregate query."""
    return (await runs_progress(session, [run_id]))[run_id]


async def cells_of_runs(session: AsyncSession, run_ids: list[str]) -> dict[str, list[t.Cell]]:
    """cells_of for many runs in one query."""
    cells: dict[str, list[t.Cell]] = {run_id: [] for run_id in run_ids}
    query = select(t.Cell).where(t.Cell.run_id.in_(run_ids)).order_by(t.Cell.run_id, t.Cell.position)
    for cell in (await session.execute(query)).scalars():
        cells[cell.run_id].append(cell)
    return cells


@functools.cache
def _progress_query():
    """Each run's latest attempts counted by cell, state and verdict, for the runs bound as
    `run_ids`. Built once: `hemra run` asks it five times a second, and building it anew (an
    aliased entity's columns, the statement) took 3.5 ms, more than it then took to run."""
    newer = aliased(t.Attempt)
    latest = ~exists().where(newer.trial_id == t.Attempt.trial_id, newer.number > t.Attempt.number)
    return (
        select(t.Attempt.run_id, t.Trial.cell_id, t.Attempt.state, t.Attempt.verdict, func.count())
        .join(t.Trial, t.Attempt.trial_id == t.Trial.id)
        .where(t.Attempt.run_id.in_(bindparam("run_ids", expanding=True)), latest)
        .group_by(t.Attempt.run_id, t.Trial.cell_id, t.Attempt.state, t.Attempt.verdict)
    )


async def runs_progress(session: AsyncSession, run_ids: list[str]) -> dict[str, tuple[dict, dict]]:
    """run_progress for many runs in one aggregate query."""
    progress = {run_id: (_empty_progress(), {}) for run_id in run_ids}
    for run_id, cell_id, state, verdict_, count in (
        await session.execute(_progress_query(), {"run_ids": run_ids})
    ).all():
        total, cells = progress[run_id]
        # A state or verdict HEMRA does not know (a row recorded before they were checked, or
        # edited by hand) counts as finished and errored, and as unreadable: the rest still reads.
        unreadable = state not in vocabulary.STATES or (
            state == "finished" and verdict_ not in (None, *vocabulary.VERDICTS)
        )
        for counts in (total, cells.setdefault(cell_id, _empty_progress())):
            counts["trials"] += count
            if unreadable:
                counts["done"] += count
                counts["errored"] += count
                counts["unreadable"] += count
            elif state == "finished":
                counts["done"] += count
                counts[verdict_ or "errored"] += count
            else:
                counts[state] += count
    return progress
