"""Reads and writes of runs, trials, attempts, events and blobs (no gRPC here)."""

from dataclasses import dataclass, field

from sqlalchemy import LargeBinary, cast, exists, func, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased

from services.domain import vocabulary
from services.common.errors import InvalidArgument, NotFound
from services.domain.vocabulary import (  # noqa: F401  (the store's words, defined once)
    CANCELLED,
    COMPLETED,
    HARNESS_FAILED,
    INFRA_FAILED,
    TIMED_OUT,
)
from services.store import audits, pagetokens, usage
from services.store import tables as t
from services.domain.ids import kind_of, new_id
from services.domain.rewards import verdict as verdict_of
from services.store.outputs import ImportProvenance

async def insert_ignore(session: AsyncSession, table, rows: list[dict]) -> None:
    """INSERT ... ON CONFLICT DO NOTHING on either database (pinned records are immutable)."""
    if not rows:
        return
    await session.execute(upsert(session, table).on_conflict_do_nothing(), rows)


def upsert(session: AsyncSession, table):
    """INSERT for this session's database, with its ON CONFLICT clauses (SQLite or PostgreSQL)."""
    return (postgresql if session.bind.dialect.name == "postgresql" else sqlite).insert(table)


async def _datasets_to_record(session: AsyncSession, rows: list[dict]) -> list[dict]:
    """The dataset rows a run records: a row lists the tasks the run selected, so a stored row
    of the same dataset listing more of its tasks (a run without `-t`) is kept, not replaced
    by a selection; any other stored row (a planted one) gives way."""
    if not rows:
        return rows
    stored = dict(
        (
            await session.execute(
                select(t.Dataset.digest, t.Dataset.task_digests).where(
                    t.Dataset.digest.in_([row["digest"] for row in rows])
                )
            )
        ).all()
    )
    return [
        row for row in rows if not (row["digest"] in stored and set(stored[row["digest"]]) > set(row["task_digests"]))
    ]


async def insert_or_replace(session: AsyncSession, table, columns: tuple[str, ...], rows: list[dict]) -> list[str]:
    """Record tasks, harnesses or datasets as the planner read them. A row already stored under
    the same digest whose `columns` differ (an older record format, another run's model, or a
    record an import planted before imports were verified) is replaced: what a run executes
    comes from the user's own files, never from whatever was stored under their digest.
    Returns the digests replaced (their cached copies are stale)."""
    if not rows:
        return []
    inserted = set(
        (
            await session.execute(
                upsert(session, table.__table__).on_conflict_do_nothing().returning(table.digest), rows
            )
        ).scalars()
    )
    wanted = {row["digest"]: row for row in rows}
    replaced = []
    digests = [digest for digest in wanted if digest not in inserted]  # stored before: compare
    for start in range(0, len(digests), 1000):
        query = select(table.digest, *(getattr(table, c) for c in columns)).where(
            table.digest.in_(digests[start : start + 1000])
        )
        for digest, *stored in (await session.execute(query)).all():
            row = wanted[digest]
            if stored != [row[c] for c in columns]:
                await session.execute(
                    update(table).where(table.digest == digest).values(**{c: row[c] for c in columns})
                )
                replaced.append(digest)
    return replaced


def _length(column) -> int | None:
    return getattr(column.type, "length", None)


def check_strings(table, row: dict, what: str) -> None:
    """Refuse what a column cannot hold the same way on both databases: a string longer than
    the column (PostgreSQL refuses it, SQLite would keep it) or one holding NUL (PostgreSQL
    refuses it). One line naming the field."""
    for key, value in row.items():
        column = table.c.get(key)
        if column is None or not isinstance(value, str):
            continue
        length = _length(column)
        if length is not None and len(value) > length:
            raise InvalidArgument(f"{what}: {key} {value[:40]!r}... is {len(value)} characters long; at most {length}")
        if "\0" in value:
            raise InvalidArgument(f"{what}: {key} {value[:40]!r} holds a NUL character")


def fit(table, row: dict) -> dict:
    """A row a worker sent, made to fit its columns on both databases (nothing is refused,
    so nothing it reported is dropped): over-long strings cut to the column, NUL replaced."""
    fitted = {}
    for key, value in row.items():
        if isinstance(value, str):
            if "\0" in value:
                value = value.replace("\0", "\ufffd")
            column = table.c.get(key)
            length = _length(column) if column is not None else None
            if length is not None and len(value) > length:
                value = value[: length - 1] + "\u2026"
        fitted[key] = value
    return fitted


@dataclass
class PlannedRun:
    """A resolved run, ready to record. Records are plain dicts of table columns."""

    label: str
    spec: dict
    concurrency: int
    max_infra_retries: int
    datasets: list[dict]
    tasks: list[dict]
    harnesses: list[dict]
    #: (dataset_digest, dataset_name, harness_digest, harness_name, model)
    cells: list[tuple[str, str, str, str, str]]
    #: (cell index, task digest, task name, repetition, imported result or None)
    trials: list[tuple[int, str, str, int, dict | None]] = field(default_factory=list)
    #: The executor pool that works its jobs.
    pool: str = "default"
    #: run, or import (results made elsewhere: attempts arrive finished, no jobs)
    kind: str = "run"
    import_format: str = ""
    source: str = ""
    tree: list | None = None
    #: Imports: who imported it, as the importer can tell it (ImportProvenance.imported_by).
    imported_by: str = ""
    #: The client's own ID for the request (PlanRunRequest.request_id): "" for none.
    request_id: str = ""


async def record_dataset(session: AsyncSession, dataset: dict, tasks: list[dict]) -> None:
    check_strings(t.Dataset.__table__, dataset, "dataset")
    for row in tasks:
        check_strings(t.Task.__table__, row, "task")
    await insert_or_replace(session, t.Task, ("task_name", "record"), tasks)
    await insert_or_replace(
        session, t.Dataset, ("dataset_name", "task_digests"), await _datasets_to_record(session, [dataset])
    )


async def record_run(session: AsyncSession, plan: PlannedRun, now: float) -> t.Run:
    """Record the run, its cells, trials, first attempts and jobs. One transaction (the caller's)."""
    if not plan.cells:
        raise InvalidArgument("a run needs at least one harness and one dataset")
    check_strings(
        t.Run.__table__,
        dict(
            label=plan.label,
            kind=plan.kind,
            import_format=plan.import_format,
            source=plan.source,
            imported_by=plan.imported_by,
        ),
        "run",
    )
    for table, rows in ((t.Task, plan.tasks), (t.Dataset, plan.datasets), (t.Harness, plan.harnesses)):
        for row in rows:
            check_strings(table.__table__, row, table.__tablename__[:-1])
    for _, ds_name, _, h_name, model in plan.cells:
        check_strings(t.Cell.__table__, dict(dataset_name=ds_name, harness_name=h_name, model=model), "cell")
    for _, _, task_name, _, result in plan.trials:
        check_strings(t.Trial.__table__, dict(task_name=task_name), "trial")
        if result is not None:
            check_strings(t.Attempt.__table__, result, "imported result")
    await insert_or_replace(session, t.Task, ("task_name", "record"), plan.tasks)
    await insert_or_replace(
        session, t.Dataset, ("dataset_name", "task_digests"), await _datasets_to_record(session, plan.datasets)
    )
    await insert_or_replace(session, t.Harness, ("harness_name", "record"), plan.harnesses)
    run = t.Run(
        id=new_id("import" if plan.kind == "import" else "run", now),
        label=plan.label,
        create_time=now,
        spec=plan.spec,
        concurrency=plan.concurrency,
        max_infra_retries=plan.max_infra_retries,
        pool=plan.pool,
        cancel_requested=False,
        kind=plan.kind,
        limited=plan.concurrency < len(plan.trials),
        import_format=plan.import_format,
        source=plan.source,
        tree=plan.tree,
        imported_by=plan.imported_by,
        import_time=now if plan.kind == "import" else None,
        request_id=plan.request_id or None,
    )
    session.add(run)
    await session.flush()  # the run row first: cells refer to it
    cell_ids = []
    # What the latest leak audit of each cell's tasks found, as planned (imports ran elsewhere).
    audited = await audits.cell_summaries(session, plan.cells, plan.trials) if plan.kind == "run" else None
    for position, (ds_digest, ds_name, h_digest, h_name, model) in enumerate(plan.cells):
        cell_ids.append(new_id("cell", now))
        session.add(
            t.Cell(
                id=cell_ids[-1],
                run_id=run.id,
                position=position,
                dataset_digest=ds_digest,
                dataset_name=ds_name,
                harness_digest=h_digest,
                harness_name=h_name,
                model=model,
                dataset_audit=None if audited is None else audited[position],
            )
        )
    await session.flush()
    trials, attempts, jobs, events = [], [], [], []
    for index, (cell_index, task_digest, task_name, repetition, result) in enumerate(plan.trials):
        if not 0 <= cell_index < len(cell_ids):
            raise InvalidArgument(f"planned trial names cell {cell_index}, the run has {len(cell_ids)}")
        trial_id = new_id("trial", now)
        trials.append(
            dict(
                id=trial_id,
                run_id=run.id,
                cell_id=cell_ids[cell_index],
                task_digest=task_digest,
                task_name=task_name,
                repetition=repetition,
            )
        )
        # Microsecond steps keep the queue first-in first-out in planning order.
        attempt, job = new_attempt_rows(run.id, trial_id, 1, now + index * 1e-6)
        if result is None:
            jobs.append(job)
            attempt.update(usage.Usage().summed())  # one insert: every row has the same columns
        else:
            # An imported trajectory: the attempt's events, counted as a writer of events counts them.
            imported = result.get("events") or []
            attempt.update(state="finished", **{k: v for k, v in result.items() if k != "events"})
            attempt.update(event_count=len(imported), **usage.of_events(imported).summed())
            attempt["verdict"] = verdict_of(attempt["outcome"], attempt.get("score"))
            events += [dict(attempt_id=attempt["id"], seq=i + 1, **e) for i, e in enumerate(imported)]
        attempts.append(attempt)
    # Bulk inserts in dependency order: one statement per table keeps a
    # thousand-trial run to a few milliseconds.
    for table, rows in ((t.Trial, trials), (t.Attempt, attempts), (t.Job, jobs), (t.Event, events)):
        if rows:
            await session.execute(table.__table__.insert(), rows)
    return run


def new_attempt_rows(run_id: str, trial_id: str, number: int, now: float) -> tuple[dict, dict]:
    attempt_id = new_id("attempt", now)
    attempt = dict(
        id=attempt_id,
        run_id=run_id,
        trial_id=trial_id,
        number=number,
        state="queued",
        outcome=None,
        exit_code=0,
        error="",
        create_time=now,
        start_time=None,
        end_time=None,
        agent_version="",
        agent_name="",
        score=None,
        artifacts=[],
        event_count=0,
        verdict=None,
        released=False,
    )
    job = dict(
        id=new_id("job", now),
        run_id=run_id,
        attempt_id=attempt_id,
        state="queued",
        lease_owner="",
        lease_token=0,
        lease_expire_time=0.0,
        try_count=0,
        last_error="",
        create_time=now,
    )
    return attempt, job


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


async def runs_progress(session: AsyncSession, run_ids: list[str]) -> dict[str, tuple[dict, dict]]:
    """run_progress for many runs in one aggregate query."""
    newer = aliased(t.Attempt)
    latest = ~exists().where(newer.trial_id == t.Attempt.trial_id, newer.number > t.Attempt.number)
    query = (
        select(t.Attempt.run_id, t.Trial.cell_id, t.Attempt.state, t.Attempt.verdict, func.count())
        .join(t.Trial, t.Attempt.trial_id == t.Trial.id)
        .where(t.Attempt.run_id.in_(run_ids), latest)
        .group_by(t.Attempt.run_id, t.Trial.cell_id, t.Attempt.state, t.Attempt.verdict)
    )
    progress = {run_id: (_empty_progress(), {}) for run_id in run_ids}
    for run_id, cell_id, state, verdict_, count in (await session.execute(query)).all():
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


#: Verdict filters of list_attempts: a verdict, or unfinished (queued or running).
VERDICTS = (*vocabulary.VERDICTS, "unfinished")


async def list_attempts(
    session: AsyncSession, run_id: str, page_size: int, page_token: str, filters: dict | None = None
) -> tuple[list[tuple[t.Attempt, t.Trial, t.Cell]], str]:
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
    rows = [tuple(row) for row in (await session.execute(query)).all()]
    more = len(rows) > page_size
    rows = rows[:page_size]
    return rows, (pagetokens.attempts_token(rows[-1][0].id) if more else "")


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


async def get_attempt(session: AsyncSession, attempt_id: str) -> tuple[t.Attempt, t.Trial, t.Cell]:
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
    return tuple(row)


def judge_scores_of(value) -> list[dict]:
    """An attempt's judge_scores column (decoded JSON, oldest first): its scores that name a judge,
    anything malformed left out (a restored export is checked, but reads never trust a row)."""
    if not isinstance(value, list):
        return []
    return [s for s in value if isinstance(s, dict) and isinstance(s.get("judge"), str) and s["judge"]]


def latest_judge_scores(value) -> dict[str, dict]:
    """Each HEMRA judge's latest score of an attempt, by judge name."""
    return {s["judge"]: s for s in judge_scores_of(value)}


def judge_models(score: dict) -> list[str]:
    """The served models a judge score names (its judgeModel, comma-separated)."""
    return [m.strip() for m in score.get("judgeModel", "").split(",") if m.strip()]


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


async def append_events(session: AsyncSession, attempt_id: str, events: list[dict]) -> int:
    """Give events the next sequence numbers of their attempt and store them."""
    if not events:
        attempt = await session.get(t.Attempt, attempt_id)
        return attempt.event_count
    result = await session.execute(
        update(t.Attempt)
        .where(t.Attempt.id == attempt_id)
        .values(
            event_count=t.Attempt.event_count + len(events),
            **usage.added(t.Attempt.__table__, usage.of_events(events)),
        )
        .returning(t.Attempt.event_count)
    )
    last = result.scalar_one()
    first = last - len(events) + 1
    rows = [dict(attempt_id=attempt_id, seq=first + i, **event) for i, event in enumerate(events)]
    await session.execute(t.Event.__table__.insert(), rows)
    return last


async def list_events(
    session: AsyncSession,
    attempt_id: str,
    page_size: int,
    page_token: str,
    max_payload_bytes: int = 0,
    after_seq: int = 0,
) -> tuple[list[t.Event], str]:
    """Events after `after_seq`, or where `page_token` (opaque, from an earlier page) says.
    With `max_payload_bytes`, payloads are read only that far (a page of multi-megabyte prompts
    stays small); see payload_columns."""
    page_size = page_size if 0 < page_size <= 10000 else 1000
    if after_seq < 0:
        raise InvalidArgument(f"after_seq {after_seq}: must not be negative")
    after = pagetokens.after_event(page_token) if page_token else after_seq
    if after >= MAX_SEQ:  # after every event there can be: the column holds 32-bit numbers
        return [], ""
    if max_payload_bytes > 0:
        query = (
            select(*payload_columns(session, max_payload_bytes))
            .where(t.Event.attempt_id == attempt_id, t.Event.seq > after)
            .order_by(t.Event.seq)
            .limit(page_size + 1)
        )
        events = [EventPreview(*row) for row in (await session.execute(query)).all()]
    else:
        query = (
            select(t.Event)
            .where(t.Event.attempt_id == attempt_id, t.Event.seq > after)
            .order_by(t.Event.seq)
            .limit(page_size + 1)
        )
        events = list((await session.execute(query)).scalars())
    more = len(events) > page_size
    events = events[:page_size]
    return events, (pagetokens.events_token(events[-1].seq) if more else "")


#: Event sequence numbers are 32-bit integers on both databases.
MAX_SEQ = 2**31 - 1


async def record_blobs(session: AsyncSession, blobs: list[tuple[str, int]], now: float) -> None:
    rows = [dict(digest=d, size_bytes=s, create_time=now) for d, s in {d: s for d, s in blobs}.items()]
    await insert_ignore(session, t.Blob.__table__, rows)


class EventPreview:
    """An event row whose payload may be cut (payload_cut) to its first bytes."""

    __slots__ = ("seq", "time", "type", "name", "payload", "duration", "payload_bytes", "payload_cut")

    def __init__(self, seq, time, type_, name, payload, duration, payload_bytes):
        self.seq, self.time, self.type, self.name, self.duration = seq, time, type_, name, duration
        self.payload, self.payload_bytes = payload, payload_bytes
        self.payload_cut = len(payload.encode()) < payload_bytes


def payload_columns(session: AsyncSession, max_bytes: int) -> tuple:
    """Event columns with the payload cut in SQL: the database reads the rest of a long
    payload from its overflow pages only to measure it, never hands it over."""
    if session.bind.dialect.name == "postgresql":
        size = func.octet_length(t.Event.payload)
    else:
        size = func.length(cast(t.Event.payload, LargeBinary))
    # substr counts characters: max_bytes characters are at least max_bytes bytes.
    return (
        t.Event.seq,
        t.Event.time,
        t.Event.type,
        t.Event.name,
        func.substr(t.Event.payload, 1, max_bytes),
        t.Event.duration,
        size,
    )
