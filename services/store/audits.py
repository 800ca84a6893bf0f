"""Dataset leak audits (hemra datasets audit): recorded per dataset digest, and summed up for
each cell of a run when it is recorded, so the run's report can say whether the tasks it ran
were audited and what the audit found. Plain rows in, plain data out."""

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from hemra.services.common.errors import InvalidArgument, NotFound
from hemra.services.store import tables as t

VERDICTS = ("clean", "leaks", "error")
#: The keys of a cell's dataset_audit, each a count of the cell's tasks but audit_time.
SUMMARY_KEYS = ("tasks", "unaudited", "leaks", "errors")


async def record_audit(session: AsyncSession, audit: dict, now: float) -> t.DatasetAudit:
    """Record an audit ({dataset_digest, dataset_name, verdict, tasks}); the dataset must be
    recorded (the planner pins it first)."""
    if await session.get(t.Dataset, audit["dataset_digest"]) is None:
        raise NotFound(f"no dataset {audit['dataset_digest'][:80]!r}: pin it before recording its audit")
    if audit["verdict"] not in VERDICTS:
        raise InvalidArgument(f"audit verdict {audit['verdict'][:20]!r} (expected one of {', '.join(VERDICTS)})")
    for task in audit["tasks"]:
        if task.get("verdict") not in VERDICTS or not str(task.get("task_digest", "")).startswith("sha256:"):
            raise InvalidArgument("an audited task needs its task_digest and a verdict of clean, leaks or error")
    row = t.DatasetAudit(audit_time=now, **audit)
    session.add(row)
    await session.flush()
    return row


async def cell_summaries(session: AsyncSession, cells: list[tuple[str, ...]], trials: list[tuple]) -> list[dict]:
    """For each planned cell (dataset digest first), what the latest audit of each of its tasks
    found: {audit_time (the newest audit used, 0 when none), tasks, unaudited, leaks, errors}.
    A task's latest audit is the newest audit of the dataset digest that audited it."""
    digests = {cell[0] for cell in cells}
    query = (
        select(t.DatasetAudit.dataset_digest, t.DatasetAudit.audit_time, t.DatasetAudit.tasks)
        .where(t.DatasetAudit.dataset_digest.in_(digests))
        .order_by(t.DatasetAudit.audit_time.desc(), t.DatasetAudit.id.desc())
    )
    latest: dict[str, dict[str, tuple[str, float]]] = {digest: {} for digest in digests}
    for digest, audit_time, tasks in (await session.execute(query)).all():
        for task in tasks or []:
            if isinstance(task, dict):
                latest[digest].setdefault(str(task.get("task_digest", "")), (str(task.get("verdict", "")), audit_time))
    tasks_of: list[set[str]] = [set() for _ in cells]
    for trial in trials:
        if 0 <= trial[0] < len(cells):
            tasks_of[trial[0]].add(trial[1])
    summaries = []
    for cell, tasks in zip(cells, tasks_of):
        found = [latest[cell[0]].get(digest) for digest in tasks]
        audited = [f for f in found if f is not None]
        summaries.append(
            {
                "audit_time": max((time for _, time in audited), default=0.0),
                "tasks": len(tasks),
                "unaudited": len(found) - len(audited),
                "leaks": sum(verdict == "leaks" for verdict, _ in audited),
                "errors": sum(verdict == "error" for verdict, _ in audited),
            }
        )
    return summaries


def flags(cell) -> list[str]:
    """A report row's flags for its cell's dataset audit: never audited, leaks found, tasks the
    audit could not check or did not cover. None of them for a cell recorded without a summary
    (an import, a run recorded before audits were) or with one that does not read as one (a
    restored export can hold anything)."""
    summary = getattr(cell, "dataset_audit", None)
    if not isinstance(summary, dict) or not all(
        isinstance(summary.get(k), int) and not isinstance(summary.get(k), bool) for k in SUMMARY_KEYS
    ):
        return []
    name = cell.dataset_name
    if summary["tasks"] and summary["unaudited"] >= summary["tasks"]:
        return [f"dataset {name} never audited (hemra datasets audit {name})"]
    found = []
    if summary["leaks"]:
        found.append(f"dataset {name} audit found leaks on {summary['leaks']} tasks")
    if summary["errors"]:
        found.append(f"dataset {name} audit could not check {summary['errors']} tasks")
    if summary["unaudited"]:
        found.append(
            f"dataset {name} not audited on {summary['unaudited']} of {summary['tasks']} tasks "
            f"(hemra datasets audit {name})"
        )
    return found
