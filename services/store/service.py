"""The store's domain facade: one transaction per operation over records, queue and report."""

import time
from pathlib import Path

from sqlalchemy.ext.asyncio import AsyncEngine

from services.bulk import gc_paused
from services.store import compare, db, exporting, queue, records, report
from services.store.errors import FailedPrecondition, InvalidArgument
from services.store import tables as t
from services.store.blobs import BlobStore
from services.store.ids import kind_of
from services.store.queue import Clock


#: How often claims also look for expired leases (store clock seconds).
RECOVERY_INTERVAL_SECS = 1.0


class Store:
    """Everything the store service does, without gRPC."""

    def __init__(self, engine: AsyncEngine, blob_dir: Path, clock: Clock = time.time):
        self.engine = engine
        self.sessions = db.session_factory(engine)
        #: Trials, cells, run specs, tasks and harnesses: immutable once recorded.
        self.pinned = queue.Pinned()
        self.blobs = BlobStore(blob_dir)
        self.clock = clock
        self._next_recovery = 0.0

    @classmethod
    async def open(cls, database_url: str, blob_dir: Path, clock: Clock = time.time) -> "Store":
        db.ensure_sqlite_parent(database_url)
        await db.migrate(database_url)
        engine = db.create_engine(database_url)
        return cls(engine, blob_dir, clock)

    async def close(self) -> None:
        await self.engine.dispose()

    async def record_run(self, plan: records.PlannedRun) -> tuple[t.Run, list[t.Cell]]:
        with gc_paused():
            return await self._record_run(plan)

    async def _record_run(self, plan: records.PlannedRun) -> tuple[t.Run, list[t.Cell]]:
        async with self.sessions.begin() as session:
            run = await records.record_run(session, plan, self.clock())
            return run, await records.cells_of(session, run.id)

    async def get_run(self, ref: str) -> tuple[t.Run, list[t.Cell], dict]:
        async with self.sessions() as session:
            run = await records.find_run(session, ref)
            return run, await records.cells_of(session, run.id), await records.run_progress(session, run.id)

    async def list_runs(self, page_size: int, page_token: str):
        async with self.sessions() as session:
            runs, token = await records.list_runs(session, page_size, page_token)
            return [(run, await records.cells_of(session, run.id), await records.run_progress(session, run.id))
                    for run in runs], token

    async def run_report(self, ref: str) -> dict:
        with gc_paused():
            async with self.sessions() as session:
                return await report.build_report(session, await records.find_run(session, ref))

    async def compare(self, a: str, b: str, judge: str = "") -> dict:
        with gc_paused():
            async with self.sessions() as session:
                scores: dict = {}  # parsed scores, shared: the sides' tasks mostly share their scorers
                side_a = await compare.resolve_side(session, a, scores)
                side_b = await compare.resolve_side(session, b, scores)
            return compare.compare(side_a, side_b, judge)

    async def cancel(self, ref: str) -> tuple[t.Run, list[t.Cell], int, str]:
        """Cancel a run (ID or label), or only the trial of an attempt or job ID.
        Returns the run, its cells, the jobs cancelled and the attempt cancelled (by attempt or job)."""
        if kind_of(ref.rpartition("/")[2]) not in ("attempt", "job"):
            return *await self.cancel_run(ref), ""
        async with self.sessions.begin() as session:
            attempt, trial, _ = await records.get_attempt(session, ref)
            run = await session.get(t.Run, attempt.run_id)
            _refuse_import(run)
            cancelled = await queue.cancel_trial(session, self.pinned, trial.id, self.clock())
            return run, await records.cells_of(session, run.id), int(bool(cancelled)), cancelled

    async def cancel_run(self, ref: str) -> tuple[t.Run, list[t.Cell], int]:
        async with self.sessions.begin() as session:
            run = await records.find_run(session, ref)
            _refuse_import(run)
            cancelled = await queue.cancel_run(session, run, self.clock())
            return run, await records.cells_of(session, run.id), cancelled

    async def list_attempts(self, run_ref: str, page_size: int, page_token: str):
        async with self.sessions() as session:
            run = await records.find_run(session, run_ref)
            return await records.list_attempts(session, run.id, page_size, page_token)

    async def get_attempt(self, attempt_id: str):
        async with self.sessions() as session:
            return await records.get_attempt(session, attempt_id)

    async def list_events(self, attempt_id: str, page_size: int, page_token: str):
        async with self.sessions() as session:
            attempt, _, _ = await records.get_attempt(session, attempt_id)
            return await records.list_events(session, attempt.id, page_size, page_token)

    async def claim_job(self, worker: str, lease_secs: float, run_id: str = ""):
        now = self.clock()
        # Looking for expired leases on every claim costs a query each; once a
        # second is plenty when leases last tens of seconds.
        recover = now >= self._next_recovery
        if recover:
            self._next_recovery = now + RECOVERY_INTERVAL_SECS
        try:
            async with self.engine.begin() as conn:
                return await queue.claim(conn, self.pinned, worker, lease_secs, now, run_id, recover)
        except queue.NoSlot:
            return None

    async def heartbeat_job(self, job_id: str, token: int, lease_secs: float) -> tuple[float, bool]:
        async with self.engine.begin() as conn:
            return await queue.heartbeat(conn, job_id, token, lease_secs, self.clock())

    async def append_events(self, job_id: str, token: int, events: list[dict]) -> int:
        async with self.engine.begin() as conn:
            return await queue.append_events(conn, job_id, token, events, self.clock())

    async def complete_job(self, job_id: str, token: int, done: queue.Completion):
        """(attempt row, trial, cell, retry attempt ID or "")."""
        async with self.engine.begin() as conn:
            return await queue.complete(conn, self.pinned, job_id, token, done, self.clock())

    async def release_job(self, job_id: str, token: int, reason: str) -> str:
        async with self.engine.begin() as conn:
            return await queue.release(conn, self.pinned, job_id, token, reason, self.clock())

    async def export_run(self, ref: str) -> tuple[dict, set[str]]:
        """A run's or import's rows (ID or label), or one trial's (an attempt or job ID)."""
        async with self.sessions() as session:
            if kind_of(ref.rpartition("/")[2]) in ("attempt", "job"):
                attempt, trial, _ = await records.get_attempt(session, ref)
                rows = await exporting.export_rows(session, await session.get(t.Run, attempt.run_id), trial.id)
            else:
                rows = await exporting.export_rows(session, await records.find_run(session, ref))
        return rows, exporting.blob_digests(rows)

    async def restore_run(self, rows: dict, events: dict[str, list[dict]]):
        missing = self.missing_blobs(sorted(exporting.blob_digests(rows)))
        if missing:
            raise InvalidArgument(f"{len(missing)} blobs the export needs are not stored (first {missing[0]})")
        async with self.sessions.begin() as session:
            run = await exporting.restore_rows(session, rows, events)
            return run, await records.cells_of(session, run.id)

    async def put_blobs(self, blobs: list[tuple[str, bytes]]) -> list[str]:
        digests = [self.blobs.put(data, expected) for expected, data in blobs]
        async with self.sessions.begin() as session:
            await records.record_blobs(session, [(d, len(b)) for d, (_, b) in zip(digests, blobs)], self.clock())
        return digests

    def get_blobs(self, digests: list[str]) -> list[bytes]:
        return [self.blobs.get(d) for d in digests]

    def missing_blobs(self, digests: list[str]) -> list[str]:
        return [d for d in digests if not self.blobs.has(d)]


def _refuse_import(run: t.Run) -> None:
    if run.kind == "import":
        raise FailedPrecondition(f"{run.label} ({run.id}) is an import: imports cannot be cancelled "
                                 f"(their results were made elsewhere)")
