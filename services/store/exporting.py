"""A run's records as plain rows (for `hemra export`), and restoring them (for `hemra import` of an export).

Rows are the tables' own columns, so a restored run is the run: the same IDs,
labels, cells, trials, attempts, scores and events, hence the same report and
the same compare output.
"""

import posixpath

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from services.store import convert, records
from services.store import tables as t
from services.store.errors import FailedPrecondition, InvalidArgument

FORMAT, VERSION = "hemra-export", 1
_TABLES = {"runs": t.Run, "cells": t.Cell, "trials": t.Trial, "attempts": t.Attempt, "tasks": t.Task,
           "datasets": t.Dataset, "harnesses": t.Harness}


def _row(obj) -> dict:
    return {column.key: getattr(obj, column.key) for column in obj.__table__.columns}


async def export_rows(session: AsyncSession, run: t.Run, trial_id: str = "") -> dict:
    """The run's rows; with `trial_id`, only that trial's (for an export by attempt or job ID),
    and for an import only the part of its tree that holds the trial's files."""
    cells = await records.cells_of(session, run.id)
    trials_query = select(t.Trial).where(t.Trial.run_id == run.id).order_by(t.Trial.id)
    attempts_query = select(t.Attempt).where(t.Attempt.run_id == run.id).order_by(t.Attempt.id)
    if trial_id:
        trials_query = trials_query.where(t.Trial.id == trial_id)
        attempts_query = attempts_query.where(t.Attempt.trial_id == trial_id)
    trials = list((await session.execute(trials_query)).scalars())
    attempts = list((await session.execute(attempts_query)).scalars())
    if trial_id:
        cells = [c for c in cells if c.id in {x.cell_id for x in trials}]
    task_digests = sorted({x.task_digest for x in trials})
    tasks = list((await session.execute(select(t.Task).where(t.Task.digest.in_(task_digests)))).scalars())
    datasets = list((await session.execute(
        select(t.Dataset).where(t.Dataset.digest.in_({c.dataset_digest for c in cells})))).scalars())
    harnesses = list((await session.execute(
        select(t.Harness).where(t.Harness.digest.in_({c.harness_digest for c in cells})))).scalars())
    run_row = _row(run)
    if trial_id and run_row.get("tree"):
        run_row["tree"] = tree_of(run_row["tree"], [a["path"] for x in attempts for a in x.artifacts or []])
    return {"format": FORMAT, "version": VERSION, "runs": [run_row], "cells": [_row(c) for c in cells],
            "trials": [_row(x) for x in trials], "attempts": [_row(a) for a in attempts],
            "tasks": [_row(x) for x in tasks], "datasets": [_row(d) for d in datasets],
            "harnesses": [_row(h) for h in harnesses]}


def tree_of(tree: list[dict], files: list[str]) -> list[dict]:
    """The entries of an import's tree that hold these files: the files, the folders above them,
    and everything under their deepest common folder (empty folders of a trial included)."""
    if not files:
        return []
    folders = {"/".join(f.split("/")[:i]) for f in files for i in range(1, f.count("/") + 1)}
    common = posixpath.commonpath(files) if len(files) > 1 else posixpath.dirname(files[0])
    wanted = set(files)
    return [e for e in tree if e["path"] in wanted or e["path"] in folders
            or (common and e["path"].startswith(common + "/"))]


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
    run["tree"] = convert.checked_tree(run.get("tree"))
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
