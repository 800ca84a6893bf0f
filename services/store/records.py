"""Recording runs, datasets and blobs: a planned run's rows, written in one transaction (no
gRPC here). Reads are in runreads.py, attemptreads.py and eventlog.py."""

from dataclasses import dataclass, field

from sqlalchemy.ext.asyncio import AsyncSession

from hemra.services.common.errors import InvalidArgument
from hemra.services.domain.ids import new_id
from hemra.services.domain.rewards import verdict as verdict_of
from hemra.services.store import audits, usage
from hemra.services.store import tables as t
from hemra.services.store.sqlrows import check_strings, datasets_to_record, insert_ignore, insert_or_replace


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
        session, t.Dataset, ("dataset_name", "task_digests"), await datasets_to_record(session, [dataset])
    )


async def record_run(session: AsyncSession, plan: PlannedRun, now: float) -> t.Run:
    """Record the run, its cells, trials, first attempts and jobs. One transaction (the caller's)."""
    if not plan.cells:
        raise InvalidArgument("a run needs at least one harness and one dataset")
    _check_plan(plan)
    await insert_or_replace(session, t.Task, ("task_name", "record"), plan.tasks)
    await insert_or_replace(
        session, t.Dataset, ("dataset_name", "task_digests"), await datasets_to_record(session, plan.datasets)
    )
    await insert_or_replace(session, t.Harness, ("harness_name", "record"), plan.harnesses)
    run = _run_row(plan, now)
    session.add(run)
    await session.flush()  # the run row first: cells refer to it
    cell_ids = await _record_cells(session, plan, run.id, now)
    trials, attempts, jobs, events = _trial_rows(plan, run.id, cell_ids, now)
    # Bulk inserts in dependency order: one statement per table keeps a
    # thousand-trial run to a few milliseconds.
    for table, rows in ((t.Trial, trials), (t.Attempt, attempts), (t.Job, jobs), (t.Event, events)):
        if rows:
            await session.execute(table.__table__.insert(), rows)
    return run


def _check_plan(plan: PlannedRun) -> None:
    """Refuse a plan holding a string its column cannot hold (sqlrows.check_strings)."""
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


def _run_row(plan: PlannedRun, now: float) -> t.Run:
    return t.Run(
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


async def _record_cells(session: AsyncSession, plan: PlannedRun, run_id: str, now: float) -> list[str]:
    """The run's cells, in planning order (flushed: trials refer to them). Returns their IDs."""
    cell_ids = []
    # What the latest leak audit of each cell's tasks found, as planned (imports ran elsewhere).
    audited = await audits.cell_summaries(session, plan.cells, plan.trials) if plan.kind == "run" else None
    for position, (ds_digest, ds_name, h_digest, h_name, model) in enumerate(plan.cells):
        cell_ids.append(new_id("cell", now))
        session.add(
            t.Cell(
                id=cell_ids[-1],
                run_id=run_id,
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
    return cell_ids


def _trial_rows(plan: PlannedRun, run_id: str, cell_ids: list[str], now: float) -> tuple[list, list, list, list]:
    """The rows of the run's trials, their first attempts, their jobs (one per attempt to run)
    and the events of the attempts an import brought."""
    trials, attempts, jobs, events = [], [], [], []
    for index, (cell_index, task_digest, task_name, repetition, result) in enumerate(plan.trials):
        if not 0 <= cell_index < len(cell_ids):
            raise InvalidArgument(f"planned trial names cell {cell_index}, the run has {len(cell_ids)}")
        trial_id = new_id("trial", now)
        trials.append(
            dict(
                id=trial_id,
                run_id=run_id,
                cell_id=cell_ids[cell_index],
                task_digest=task_digest,
                task_name=task_name,
                repetition=repetition,
            )
        )
        # Microsecond steps keep the queue first-in first-out in planning order.
        attempt, job = new_attempt_rows(run_id, trial_id, 1, now + index * 1e-6)
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
    return trials, attempts, jobs, events


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


async def record_blobs(session: AsyncSession, blobs: list[tuple[str, int]], now: float) -> None:
    rows = [dict(digest=d, size_bytes=s, create_time=now) for d, s in {d: s for d, s in blobs}.items()]
    await insert_ignore(session, t.Blob.__table__, rows)
