"""A run's records as plain rows (for `hemra export`), and restoring them (for `hemra import` of an export).

Rows are the tables' own columns, so a restored run is the run: the same IDs,
labels, cells, trials, attempts, scores and events, hence the same report and
the same compare output.
"""

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from services.store import records
from services.store import tables as t
from services.store.errors import FailedPrecondition, InvalidArgument

FORMAT, VERSION = "hemra-export", 1
_TABLES = {"runs": t.Run, "cells": t.Cell, "trials": t.Trial, "attempts": t.Attempt, "tasks": t.Task,
           "datasets": t.Dataset, "harnesses": t.Harness}


def _row(obj) -> dict:
    return {column.key: getattr(obj, column.key) for column in obj.__table__.columns}


async def export_rows(session: AsyncSession, run: t.Run) -> dict:
    cells = await records.cells_of(session, run.id)
    trials = list((await session.execute(select(t.Trial).where(t.Trial.run_id == run.id).order_by(t.Trial.id))).scalars())
    attempts = list((await session.execute(
        select(t.Attempt).where(t.Attempt.run_id == run.id).order_by(t.Attempt.id))).scalars())
    task_digests = sorted({x.task_digest for x in trials})
    tasks = list((await session.execute(select(t.Task).where(t.Task.digest.in_(task_digests)))).scalars())
    datasets = list((await session.execute(
        select(t.Dataset).where(t.Dataset.digest.in_({c.dataset_digest for c in cells})))).scalars())
    harnesses = list((await session.execute(
        select(t.Harness).where(t.Harness.digest.in_({c.harness_digest for c in cells})))).scalars())
    return {"format": FORMAT, "version": VERSION, "runs": [_row(run)], "cells": [_row(c) for c in cells],
            "trials": [_row(x) for x in trials], "attempts": [_row(a) for a in attempts],
            "tasks": [_row(x) for x in tasks], "datasets": [_row(d) for d in datasets],
            "harnesses": [_row(h) for h in harnesses]}


def blob_digests(rows: dict) -> set[str]:
    """Every blob the rows refer to: task files, artifacts, verifier output, an import's tree."""
    found = set()
    for task in rows["tasks"]:
        found.update(f.get("blobDigest", "") for f in task["record"].get("files", []))
    for attempt in rows["attempts"]:
        found.update(a.get("blobDigest", "") for a in attempt["artifacts"] or [])
        found.add((attempt["score"] or {}).get("stdoutBlobDigest", ""))
    for run in rows["runs"]:
        found.update(e.get("blobDigest", "") for e in run.get("tree") or [])
    found.discard("")
    return found


async def restore_rows(session: AsyncSession, rows: dict, events: dict[str, list[dict]]) -> t.Run:
    """Insert an export's rows as they are, in one transaction (the caller's)."""
    if rows.get("format") != FORMAT or rows.get("version") != VERSION:
        raise InvalidArgument(f"not a {FORMAT} version {VERSION} manifest")
    [run] = rows["runs"]
    if await session.get(t.Run, run["id"]) is not None:
        raise FailedPrecondition(f"{run['id']} ({run['label']}) is already in this store")
    for name in ("tasks", "datasets", "harnesses"):
        await records.insert_ignore(session, _TABLES[name].__table__, rows[name])
    for name in ("runs", "cells", "trials", "attempts"):
        if rows[name]:
            await session.execute(_TABLES[name].__table__.insert(), rows[name])
    attempt_ids = {a["id"] for a in rows["attempts"]}
    for attempt_id, batch in events.items():
        if attempt_id not in attempt_ids:
            raise InvalidArgument(f"events of attempt {attempt_id}, which the export does not hold")
        if batch:
            await session.execute(t.Event.__table__.insert(), [dict(attempt_id=attempt_id, **e) for e in batch])
    return await session.get(t.Run, run["id"])
