"""Rows of the queue that never change once recorded (trials with their cells, a run's spec
and limits, tasks, harnesses), read once per store and kept (a trial while its attempt is
live): `Pinned`. The queue's tables as
Core objects are named here too."""

from collections.abc import Callable
from typing import Any

from sqlalchemy import bindparam, select

from hemra.services.domain.records import CellInfo, Record, RunInfo, TrialInfo
from hemra.services.store import tables as t

Clock = Callable[[], float]

JOBS, ATTEMPTS, RUNS = t.Job.__table__, t.Attempt.__table__, t.Run.__table__
TRIALS, CELLS, TASKS, HARNESSES = t.Trial.__table__, t.Cell.__table__, t.Task.__table__, t.Harness.__table__
EVENTS = t.Event.__table__


# --------------------------------------------------------------------------- pinned rows


_TRIAL_CELL = (
    select(
        TRIALS.c.id,
        TRIALS.c.run_id,
        TRIALS.c.cell_id,
        TRIALS.c.task_digest,
        TRIALS.c.task_name,
        TRIALS.c.repetition,
        CELLS.c.position,
        CELLS.c.dataset_digest,
        CELLS.c.dataset_name,
        CELLS.c.harness_digest,
        CELLS.c.harness_name,
        CELLS.c.model,
    )
    .join_from(TRIALS, CELLS, CELLS.c.id == TRIALS.c.cell_id)
    .where(TRIALS.c.id == bindparam("trial_id"))
)
_RUN_INFO = select(RUNS.c.spec, RUNS.c.concurrency, RUNS.c.max_infra_retries, RUNS.c.limited).where(
    RUNS.c.id == bindparam("run_id")
)


class Pinned:
    """Rows that never change once recorded, read at most once per store process.

    Bounded: past `size` entries the oldest go first (and are read again when
    needed). Nothing cached here is ever deleted by the store; a task or harness
    record is replaced only by a new run that records it as its planner read it
    (sqlrows.insert_or_replace), and that run forgets the cached copy.

    A trial is kept only while its work is live: claimed, it is kept (with one
    copy of its cell, shared by the cell's trials) until its attempt completes
    (`settled_trial`), so the cache holds what running work needs, not the run's
    history. A trial claimed again (an infrastructure retry, a lease recovered)
    is read again on a miss.
    """

    def __init__(self, size: int = 16384):
        self.size = size
        self._rows: dict[tuple, Any] = {}

    def _put(self, key: tuple, value):
        if len(self._rows) >= self.size:
            self._rows.pop(next(iter(self._rows)))
        self._rows[key] = value
        return value

    async def trial(self, conn, trial_id: str) -> tuple[TrialInfo, CellInfo]:
        found = self._rows.get(("trial", trial_id))
        if found is not None:
            return found
        return self.put_trial((await conn.execute(_TRIAL_CELL, {"trial_id": trial_id})).one())

    async def settled_trial(self, conn, trial_id: str) -> tuple[TrialInfo, CellInfo]:
        """A trial whose attempt completed, no longer kept: the cached copy, else read."""
        found = self._rows.pop(("trial", trial_id), None)
        if found is not None:
            return found
        return self._trial_of((await conn.execute(_TRIAL_CELL, {"trial_id": trial_id})).one())

    def take_trial(self, trial_id: str) -> tuple[TrialInfo, CellInfo] | None:
        """A trial whose attempt completed or was otherwise closed (released, recovered,
        cancelled), no longer kept: the cached copy, or None."""
        return self._rows.pop(("trial", trial_id), None)

    def put_trial(self, row) -> tuple[TrialInfo, CellInfo]:
        """Keep a trial and its cell read elsewhere (a row with _TRIAL_CELL's columns)."""
        return self._put(("trial", row.id), self._trial_of(row))

    def _trial_of(self, row) -> tuple[TrialInfo, CellInfo]:
        # One CellInfo per cell, shared by its trials (and their IDs with it): a trial
        # costs its own fields only.
        cell = self._rows.get(("cell", row.cell_id))
        if cell is None:
            cell = self._put(
                ("cell", row.cell_id),
                CellInfo(
                    row.cell_id,
                    row.run_id,
                    row.position,
                    row.dataset_digest,
                    row.dataset_name,
                    row.harness_digest,
                    row.harness_name,
                    row.model,
                ),
            )
        trial = TrialInfo(row.id, cell.run_id, cell.id, row.task_digest, row.task_name, row.repetition)
        return trial, cell

    def forget(self, kind: str, key: str) -> None:
        """Drop a task or harness record a new run recorded again (it may have replaced it)."""
        self._rows.pop((kind, key), None)

    def cached(self, kind: str, key: str):
        """A row already read ("trial", "run", or a table name with a digest), else None."""
        return self._rows.get((kind, key))

    async def run(self, conn, run_id: str) -> RunInfo:
        found = self._rows.get(("run", run_id))
        if found is not None:
            return found
        row = (await conn.execute(_RUN_INFO, {"run_id": run_id})).one()
        return self._put(
            ("run", run_id), RunInfo(run_id, row.spec, row.concurrency, row.max_infra_retries, bool(row.limited))
        )

    async def record(self, conn, table, digest: str) -> Record:
        found = self._rows.get((table.name, digest))
        if found is not None:
            return found
        record = (await conn.execute(select(table.c.record).where(table.c.digest == digest))).scalar_one()
        return self._put((table.name, digest), Record(digest, record))
