"""The store's domain facade: one transaction per operation over records, queue and report."""

import asyncio
import dataclasses
import functools
import logging
import time
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError, SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncEngine

from hemra.services.bulk import gc_paused
from hemra.services.common.errors import FailedPrecondition, InvalidArgument, LeaseLost, NotFound
from hemra.services.domain import vocabulary
from hemra.services.domain.ids import kind_of
from hemra.services.domain.records import LeasedJob
from hemra.services.store import (
    attemptreads,
    audits,
    catalog,
    completion,
    criteria,
    db,
    eventlog,
    exporting,
    mined,
    outputs,
    pinned,
    queue,
    records,
    repair,
    report,
    runreads,
    settled,
    sqlrows,
    verify,
)
from hemra.services.store import tables as t
from hemra.services.store.blobs import BlobStore
from hemra.services.store.pinned import Clock

logger = logging.getLogger(__name__)

#: How often claims also look for expired leases (store clock seconds).
RECOVERY_INTERVAL_SECS = 1.0
#: Settled runs whose progress (and report) a store process keeps.
SETTLED_CACHE_SIZE = 4096
#: Trials of settled runs' cells a store process keeps for compare (a few hundred bytes each).
SETTLED_TRIALS_KEPT = 200_000
#: Attempts in settled runs' pages a store process keeps shaped for ListAttempts (~1.5 KB each).
SETTLED_PAGE_ATTEMPTS_KEPT = 20_000


class Store:
    """Everything the store service does, without gRPC."""

    def __init__(self, engine: AsyncEngine, blob_dir: Path, clock: Clock = time.time):
        self.engine = engine
        self.sessions = db.session_factory(engine)
        #: For operations that only read: on SQLite they take no lock (db.reading).
        self.reads = db.session_factory(db.reading(engine))
        #: Trials, cells, run specs, tasks and harnesses: immutable once recorded.
        self.pinned = pinned.Pinned()
        self.blobs = BlobStore(blob_dir)
        self.clock = clock
        self._next_recovery = 0.0
        #: The queue's hot path: one statement per call on PostgreSQL (pgqueue.py), one thread
        #: hop per call on a SQLite file (sqlitequeue.py).
        self.fast = None
        if engine.dialect.name == "postgresql":
            from hemra.services.store.pgqueue import FastQueue

            self.fast = FastQueue(db.asyncpg_dsn(engine.url))
        elif engine.dialect.name == "sqlite" and engine.url.database not in (None, "", ":memory:"):
            from hemra.services.store.sqlitequeue import FastQueue

            self.fast = FastQueue(engine.url.database)
        #: run ID -> (progress, per-cell progress), report and catalog facts, of settled runs only.
        #: Judging changes a settled run's report and trials, so those are kept with the run's
        #: judge_version and used only while it is still the database's.
        self._settled: dict[str, tuple[dict, dict]] = {}
        self._reports: dict[str, tuple[int, outputs.Report]] = {}
        self._facts: dict[str, tuple[int | None, list[catalog.Fact]]] = {}
        #: cell ID -> (its run's judge_version, the latest attempt of each trial), of settled
        #: cells; how many kept.
        self._trials: dict[str, tuple[int, list]] = {}
        self._trials_kept = 0
        #: (run ID, page request, shape) -> (judge_version, attempts, the shaped page) of settled runs.
        self._pages: dict[tuple, tuple[int, int, object]] = {}
        self._pages_kept = 0

    @classmethod
    async def open(cls, database_url: str, blob_dir: Path, clock: Clock = time.time, migrate: bool = True) -> "Store":
        """The store over `database_url`, migrated first unless told not to (a deployment's
        store service leaves that to `hemra db upgrade` and serves once the schema is at head)."""
        db.ensure_sqlite_parent(database_url)
        if migrate:
            await db.migrate(database_url)
        engine = db.create_engine(database_url)
        return cls(engine, blob_dir, clock)

    def forget(self) -> None:
        """Drop every row and fact kept from the database: another process wrote to it (a
        run recorded again, a settled run judged), so none of it can be trusted."""
        self.pinned = pinned.Pinned()
        self._settled.clear()
        self._reports.clear()
        self._facts.clear()
        self._trials.clear()
        self._trials_kept = 0
        self._pages.clear()
        self._pages_kept = 0

    async def close(self) -> None:
        if self.fast is not None:
            await self.fast.close()
        await self.engine.dispose()

    async def record_run(self, plan: records.PlannedRun) -> tuple[t.Run, list[t.Cell]]:
        with gc_paused():
            return await self._record_run(plan)

    async def _record_run(self, plan: records.PlannedRun) -> tuple[t.Run, list[t.Cell]]:
        if plan.request_id:  # a repeated request: the run its first recorded
            found = await self._run_of_request(plan.request_id)
            if found is not None:
                return found
        try:
            return await self._record_new_run(plan)
        except IntegrityError:
            # The same request twice at once: the unique request_id let one record the run.
            found = await self._run_of_request(plan.request_id) if plan.request_id else None
            if found is None:
                raise
            return found

    async def _run_of_request(self, request_id: str) -> tuple[t.Run, list[t.Cell]] | None:
        async with self.sessions() as session:
            run = await runreads.run_of_request(session, request_id)
            return None if run is None else (run, await runreads.cells_of(session, run.id))

    async def _record_new_run(self, plan: records.PlannedRun) -> tuple[t.Run, list[t.Cell]]:
        async with self.sessions.begin() as session:
            run = await records.record_run(session, plan, self.clock())
            cells = await runreads.cells_of(session, run.id)
            if run.kind == "import":  # every trial finished: settled from the start
                await settled.keep_run(session, run, [cell.id for cell in cells])
        for row in plan.tasks:
            self.pinned.forget(pinned.TASKS.name, row["digest"])
        for row in plan.harnesses:
            self.pinned.forget(pinned.HARNESSES.name, row["digest"])
        return run, cells

    async def get_run(self, ref: str) -> tuple[t.Run, list[t.Cell], dict]:
        async with self.reads() as session:
            run = await runreads.find_run(session, ref)
            progress = await self._progress(session, [run.id], {run.id: run.judge_version})
            return run, await runreads.cells_of(session, run.id), progress[run.id]

    async def list_runs(self, page_size: int, page_token: str, kind: str = ""):
        async with self.reads() as session:
            runs, token = await runreads.list_runs(session, page_size, page_token, kind)
            ids = [run.id for run in runs]
            versions = {run.id: run.judge_version for run in runs}
            cells, progress = await runreads.cells_of_runs(session, ids), await self._progress(session, ids, versions)
            return [(run, cells[run.id], progress[run.id]) for run in runs], token

    async def open_jobs(self, run_ids: list[str]) -> dict[str, list[dict]]:
        """The unfinished jobs of these runs (runreads.open_jobs)."""
        async with self.sessions() as session:
            return await runreads.open_jobs(session, run_ids)

    async def _progress(
        self, session, run_ids: list[str], versions: dict[str, int] | None = None
    ) -> dict[str, tuple[dict, dict]]:
        """Progress of runs. A settled run (every attempt finished) changes again only when a
        resume or repair queues its trials anew, which moves its judge_version: settled runs
        are counted once per process and judge_version (`versions`, when the caller read them)."""
        versions = versions or {}
        progress = {}
        for run_id in run_ids:
            kept = self._settled.get(run_id)
            if kept is not None and (run_id not in versions or kept[0] == versions[run_id]):
                progress[run_id] = kept[1]
        missing = [run_id for run_id in run_ids if run_id not in progress]
        if missing:
            for run_id, counts in (await runreads.runs_progress(session, missing)).items():
                progress[run_id] = counts
                total = counts[0]
                if total["trials"] and not total["queued"] and not total["running"]:
                    self._remember(self._settled, run_id, (versions.get(run_id), counts))
                else:
                    self._settled.pop(run_id, None)
        return progress

    @staticmethod
    def _remember(cache: dict, key, value) -> None:
        if len(cache) >= SETTLED_CACHE_SIZE:
            cache.pop(next(iter(cache)))
        cache[key] = value

    async def run_report(self, ref: str) -> outputs.Report:
        """The report; a settled run's is built once per process and judge_version (only judging
        changes it)."""
        with gc_paused():
            async with self.reads() as session:
                run = await runreads.find_run(session, ref)
                runreads.refuse_loose(run, "a report")
                kept = self._reports.get(run.id)
                if kept is not None and kept[0] == run.judge_version:
                    return kept[1]
                # Settledness first: a report built after the run was seen settled is final.
                await self._progress(session, [run.id], {run.id: run.judge_version})
                settled_now = run.id in self._settled
                built, read = await report.build_report(session, run)
                if settled_now:
                    self._remember(self._reports, run.id, (run.judge_version, built))
            await self._keep_settled([(run.judge_version, read)])
            return built

    async def compare(self, a: str, b: str, judge: str = "", list_limit: int = 0) -> outputs.Comparison:
        if list_limit < 0:
            raise InvalidArgument(f"list_limit must be 0 (all) or more, not {list_limit}")
        # Imported here: it brings numpy (~0.1 s), which no other store call needs.
        from hemra.services.store import compare

        with gc_paused():
            read_settled: list = []
            load = functools.partial(self._trials_of, read_settled=read_settled)
            async with self.reads() as session:
                scores: dict = {}  # parsed scores, shared: the sides' tasks mostly share their scorers
                side_a = await compare.resolve_side(session, a, scores, load)
                side_b = await compare.resolve_side(session, b, scores, load)
                tasks = await compare.unpaired_tasks(session, side_a, side_b)
            compared = compare.compare(side_a, side_b, judge, tasks, list_limit)
            await self._keep_settled(read_settled)
            return compared

    async def _trials_of(
        self, session, run: t.Run, cells: list[t.Cell], scores: dict, read_settled: list
    ) -> dict[str, list]:
        """report.load_trials, kept in this process for the cells of settled runs: their latest
        attempts cannot change, and judging them (here or in any other process) moves the run's
        judge_version, read before the trials. Nothing reads a kept trial but to compare it.
        Appends (judge_version, trials) of cells read settled from their attempts to
        `read_settled`, for _keep_settled."""
        found = {}
        for cell in cells:
            kept = self._trials.get(cell.id)
            if kept is not None and kept[0] == run.judge_version:
                found[cell.id] = kept[1]
        missing = [c for c in cells if c.id not in found]
        if missing:
            loaded = await report.load_trials(session, [c.id for c in missing], scores, run.judge_version)
            for cell_id in loaded.final:  # what was read of them cannot change (settled.py)
                self._keep_trials(cell_id, run.judge_version, loaded.trials[cell_id])
            found.update(loaded.trials)
            read_settled.append((run.judge_version, loaded.newly_settled))
        return found

    async def _keep_settled(self, read: list[tuple[int, dict]]) -> None:
        """Write the trials of cells a read found settled (settled.keep), so that no later read,
        in any process, joins their attempts again. Only a shortcut: when the database will
        not take the write (read-only, busy), the rows are not kept and nothing else changes."""
        if not any(trials for _, trials in read):
            return
        try:
            async with self.sessions.begin() as session:
                for judge_version, trials in read:
                    await settled.keep(session, judge_version, trials)
        except SQLAlchemyError as exc:
            logger.info("settled cells not kept: %s", str(exc).splitlines()[0])

    def _keep_trials(self, cell_id: str, judge_version: int, trials: list) -> None:
        if len(trials) > SETTLED_TRIALS_KEPT:
            return
        self._forget_trials(cell_id)  # kept at an older judge_version
        while self._trials and self._trials_kept + len(trials) > SETTLED_TRIALS_KEPT:
            self._forget_trials(next(iter(self._trials)))
        self._trials[cell_id] = (judge_version, trials)
        self._trials_kept += len(trials)

    def _forget_trials(self, cell_id: str) -> None:
        kept = self._trials.pop(cell_id, None)
        if kept is not None:
            self._trials_kept -= len(kept[1])

    async def cancel(self, ref: str) -> tuple[t.Run, list[t.Cell], int, str]:
        """Cancel a run (ID or label), or only the trial of an attempt or job ID.
        Returns the run, its cells, the jobs cancelled and the attempt cancelled (by attempt or job)."""
        if kind_of(ref.rpartition("/")[2]) not in ("attempt", "job"):
            return *await self.cancel_run(ref), ""
        async with self.sessions.begin() as session:
            found = await attemptreads.get_attempt(session, ref)
            run = await session.get(t.Run, found.attempt.run_id)
            _refuse_import(run)
            cancelled = await queue.cancel_trial(session, self.pinned, found.trial.id, self.clock())
            return run, await runreads.cells_of(session, run.id), int(bool(cancelled)), cancelled

    async def cancel_run(self, ref: str) -> tuple[t.Run, list[t.Cell], int]:
        async with self.sessions.begin() as session:
            run = await runreads.find_run(session, ref)
            _refuse_import(run)
            cancelled = await queue.cancel_run(session, run, self.clock())
            return run, await runreads.cells_of(session, run.id), cancelled

    async def requeue(
        self,
        ref: str,
        kind: str,
        reasons: list[str],
        dry_run: bool,
        requested_by: str,
        allowed_changes: list[dict],
    ) -> tuple[t.Run, list[t.Cell], dict, repair.Outcome]:
        """Resume (kind "resume") or repair a run (repair.py): its trials without a usable score
        queued again as new attempts, all in one transaction, or none. Returns the run as it is
        now, its cells and progress, and what was queued."""
        wanted = repair.reasons_of(reasons) if kind == "repair" else ("cancelled", "infra")
        changes = repair.changes_of(allowed_changes)
        sessions = self.sessions if dry_run else self.sessions.begin
        async with sessions() as session:
            run = await runreads.find_run(session, ref)
            done = await repair.requeue(
                session, self.pinned, run, kind, wanted, self.clock(), dry_run, requested_by, changes
            )
        if done.repair is not None:  # what this process kept of it as settled is stale now
            self._settled.pop(run.id, None)
            self._reports.pop(run.id, None)
            self._facts.pop(run.id, None)
        run, cells, progress = await self.get_run(run.id)
        return run, cells, progress, done

    async def list_attempts(
        self, run_ref: str, page_size: int, page_token: str, filters: dict | None = None, shape=None
    ):
        """A page of a run's attempts: (AttemptReads, next page token), or `shape(them, token,
        job IDs by attempt ID)`. Shaped pages of a settled run are kept per process and
        judge_version, as its report is (only judging, a resume or a repair changes them), once
        this process has seen it settled (its progress read by GetRun, ListRuns or the report:
        no query is added for it here)."""
        async with self.reads() as session:
            run = await runreads.find_run(session, run_ref)
            seen = self._settled.get(run.id)
            settled_now = shape is not None and seen is not None and seen[0] == run.judge_version
            key = (run.id, page_size, page_token, tuple(sorted((filters or {}).items())), shape)
            kept = self._pages.get(key) if settled_now else None
            if kept is not None and kept[0] == run.judge_version:
                return kept[2]
            rows, token = await attemptreads.list_attempts(session, run.id, page_size, page_token, filters)
            if shape is None:
                return rows, token
            jobs = await runreads.job_ids(session, [row.attempt.id for row in rows])
        page = shape(rows, token, jobs)
        if settled_now:
            self._keep_page(key, run.judge_version, len(rows), page)
        return page

    def _keep_page(self, key: tuple, judge_version: int, attempts: int, page) -> None:
        old = self._pages.pop(key, None)
        self._pages_kept -= old[1] if old else 0
        while self._pages and self._pages_kept + attempts > SETTLED_PAGE_ATTEMPTS_KEPT:
            self._pages_kept -= self._pages.pop(next(iter(self._pages)))[1]
        if attempts <= SETTLED_PAGE_ATTEMPTS_KEPT:
            self._pages[key] = (judge_version, attempts, page)
            self._pages_kept += attempts

    async def get_attempt(self, attempt_id: str):
        async with self.reads() as session:
            return await attemptreads.get_attempt(session, attempt_id)

    async def label_matches(self, ref: str, run: t.Run) -> int:
        """Runs and imports carrying the label `ref` found `run` by (runreads.label_matches)."""
        async with self.reads() as session:
            return await runreads.label_matches(session, ref, run)

    async def job_ids(self, attempt_ids: list[str]) -> dict[str, str]:
        """The job that works each of these attempts, by attempt ID."""
        async with self.reads() as session:
            return await runreads.job_ids(session, attempt_ids)

    async def record_dataset(self, dataset: dict, tasks: list[dict]) -> None:
        """A dataset and its tasks, pinned without a run."""
        if not tasks:
            raise InvalidArgument("a dataset needs at least one task")
        async with self.sessions.begin() as session:
            await records.record_dataset(session, dataset, tasks)
        for row in tasks:
            self.pinned.forget(pinned.TASKS.name, row["digest"])

    async def record_dataset_audit(self, audit: dict) -> t.DatasetAudit:
        """A dataset's leak audit (hemra datasets audit); runs planned later record what it found."""
        async with self.sessions.begin() as session:
            return await audits.record_audit(session, audit, self.clock())

    async def record_judge_scores(self, judged: list[tuple[str, list[dict]]]) -> None:
        """Append HEMRA judge scores to finished attempts (re-judging keeps the earlier ones), all
        or none."""
        async with self.sessions.begin() as session:
            attempts = await attemptreads.lock_attempts(session, [attempt_id for attempt_id, _ in judged])
            for attempt_id, scores in judged:
                attempt = attempts[attempt_id.rpartition("/")[2]]
                if attempt.state != "finished":
                    raise FailedPrecondition(f"attempt {attempt.id} has not finished: judge it once it has")
                attempt.judge_scores = [*(attempt.judge_scores or []), *scores]
            # A settled run's report and trials change only here: what any store keeps of them
            # is kept with the judge_version it was read at.
            await attemptreads.judged(session, {a.run_id for a in attempts.values()})

    async def get_task(self, ref: str) -> dict:
        async with self.reads() as session:
            task = await session.get(t.Task, ref.rpartition("/")[2])
            if task is None:
                raise NotFound(f"no task {runreads.shown(ref)}")
            return task.record

    async def list_events(
        self, attempt_id: str, page_size: int, page_token: str, max_payload_bytes: int = 0, after_seq: int = 0
    ):
        async with self.reads() as session:
            attempt = (await attemptreads.get_attempt(session, attempt_id)).attempt
            return await eventlog.list_events(session, attempt.id, page_size, page_token, max_payload_bytes, after_seq)

    async def list_datasets(self) -> list[outputs.DatasetSummary]:
        async with self.reads() as session:
            return await catalog.list_datasets(session)

    async def list_tasks(self, dataset: str, page_size: int, page_token: str) -> outputs.TaskPage:
        async with self.reads() as session:
            return await catalog.list_tasks(session, dataset, page_size, page_token, self._facts_of(session))

    async def list_harnesses(self) -> list[outputs.HarnessSummary]:
        async with self.reads() as session:
            return await catalog.list_harnesses(session)

    async def list_scorers(self) -> list[outputs.ScorerSummary]:
        async with self.reads() as session:
            return await catalog.list_scorers(session, self._facts_of(session))

    async def list_judges(self) -> tuple[list[outputs.JudgeSummary], str]:
        async with self.reads() as session:
            return await catalog.list_judges(session)

    def _facts_of(self, session):
        """catalog.attempt_facts, kept for settled runs (their attempts cannot change)."""

        async def facts_of(run_ids: list[str]) -> dict[str, list[catalog.Fact]]:
            # Kept at the run's judge_version: a resume or repair (in any process) moves it.
            query = select(t.Run.id, t.Run.judge_version).where(t.Run.id.in_(run_ids))
            versions = dict((await session.execute(query)).all())
            facts = {}
            for run_id in run_ids:
                kept = self._facts.get(run_id)
                if kept is not None and kept[0] == versions.get(run_id):
                    facts[run_id] = kept[1]
            missing = [run_id for run_id in run_ids if run_id not in facts]
            if missing:
                # Settledness first: facts read after a run was seen settled are final.
                await self._progress(session, missing, versions)
                settled = {run_id for run_id in missing if run_id in self._settled}
                fresh = await catalog.attempt_facts(session, missing)
                for run_id, rows in fresh.items():
                    facts[run_id] = rows
                    if run_id in settled:
                        self._remember(self._facts, run_id, (versions.get(run_id), rows))
            return facts

        return facts_of

    async def attempt_usage(self, run: str) -> list[outputs.AttemptUsage]:
        async with self.reads() as session:
            return await catalog.attempt_usage(session, run)

    async def history_mining(self, run: str) -> outputs.HistoryMining:
        async with self.reads() as session:
            return await mined.history_mining(session, run)

    async def criterion_table(self, dataset: str, source: str = "") -> outputs.CriterionTable:
        async with self.reads() as session:
            return await criteria.criterion_table(
                session, dataset, source, progress=lambda run_ids: self._progress(session, run_ids)
            )

    async def claim_job(
        self, worker: str, lease_secs: float, run_id: str = "", pool: str = "", after: str = "", cell: str = ""
    ) -> queue.Claimed | None:
        """Lease the next job for `worker` (claim_jobs with one)."""
        claimed = await self.claim_jobs(worker, lease_secs, run_id, pool, after, cell)
        return claimed[0] if claimed else None

    async def claim_jobs(
        self,
        worker: str,
        lease_secs: float,
        run_id: str = "",
        pool: str = "",
        after: str = "",
        cell: str = "",
        max_jobs: int = 1,
    ) -> list[queue.Claimed]:
        """Lease up to `max_jobs` jobs for `worker` (its free slots), oldest first, each with a
        lease of its own; `after`: the job whose completion claims them; `cell`: only that
        cell's (off the hot path: a harbor supervisor gathers its cell once)."""
        worker = _owner(worker)
        now = self.clock()
        # Looking for expired leases on every claim costs a query each; once a
        # second is plenty when leases last tens of seconds.
        if now >= self._next_recovery:
            self._next_recovery = now + RECOVERY_INTERVAL_SECS
            async with self.engine.begin() as conn:
                await queue.recover_expired(conn, self.pinned, now)
        if self.fast is not None and not cell:
            found = await self.fast.claim(self.pinned, worker, lease_secs, now, run_id, pool, after, max_jobs)
            return [await self._claimed(*one) for one in found]
        claimed = []
        for _ in range(max_jobs):  # a transaction each: a run's last slot taken first ends the batch
            try:
                async with self.engine.begin() as conn:
                    one = await queue.claim(
                        conn, self.pinned, worker, lease_secs, now, run_id, False, pool, after, cell=cell
                    )
            except queue.NoSlot:
                one = None
            if one is None:
                break
            claimed.append(one)
        return claimed

    async def claimed_after(self, job_id: str, worker: str) -> list[queue.Claimed]:
        """The jobs completing `job_id` claimed for `worker`, still leased and unworked."""
        async with self.engine.connect() as conn:
            return await queue.claimed_after(conn, self.pinned, job_id, _owner(worker), self.clock())

    async def _claimed(self, job, attempt, trial, cell) -> queue.Claimed:
        """A job the fast path leased, with its pinned run, task and harness (read on a run's
        first claim in this process, cached after)."""
        run = self.pinned.cached("run", job.run_id)
        task = self.pinned.cached(pinned.TASKS.name, trial.task_digest)
        harness = self.pinned.cached(pinned.HARNESSES.name, cell.harness_digest)
        if run is None or task is None or harness is None:
            async with self.engine.connect() as conn:
                run = await self.pinned.run(conn, job.run_id)
                task = await self.pinned.record(conn, pinned.TASKS, trial.task_digest)
                harness = await self.pinned.record(conn, pinned.HARNESSES, cell.harness_digest)
        return queue.Claimed(LeasedJob.of(job), attempt, trial, cell, run, task, harness)

    async def heartbeat_job(self, job_id: str, token: int, lease_secs: float) -> tuple[float, bool]:
        if self.fast is not None:
            beat = await self.fast.heartbeat(job_id, token, lease_secs, self.clock())
            if beat is None:
                raise LeaseLost(f"job {job_id}: lease lost")
            return beat
        async with self.engine.begin() as conn:
            return await queue.heartbeat(conn, job_id, token, lease_secs, self.clock())

    async def append_events(self, job_id: str, token: int, events: list[dict], first_seq: int = 0) -> int:
        # Fitted, never refused: a type longer than its column would fail the whole batch on
        # PostgreSQL (and pass on SQLite), and the worker has nowhere else to put it.
        events = [sqlrows.fit(t.Event.__table__, e) for e in events]
        if self.fast is not None and events:
            last = await self.fast.append_events(job_id, token, events, self.clock(), first_seq)
            if last is not None:
                return last
            # Not matched: a lost lease, or a repeated or out-of-order batch; queue.py says which.
        async with self.engine.begin() as conn:
            return await queue.append_events(conn, job_id, token, events, self.clock(), first_seq)

    async def complete_job(self, job_id: str, token: int, done: completion.Completion) -> completion.Completed:
        fitted = sqlrows.fit(
            t.Attempt.__table__, dict(agent_version=done.agent_version, agent_name=done.agent_name, error=done.error)
        )
        done = dataclasses.replace(done, **fitted)
        if self.fast is not None and done.outcome != vocabulary.INFRA_FAILED:
            attempt = await self.fast.complete(job_id, token, done, self.clock())
            trial = attempt and self.pinned.take_trial(attempt.trial_id)
            if trial is not None:
                return completion.Completed(attempt, *trial, "")
            # Not matched (a repeat, a stale token) or not cached: queue.py says which and why.
            if attempt is not None:
                async with self.engine.connect() as conn:
                    return completion.Completed(attempt, *await self.pinned.settled_trial(conn, attempt.trial_id), "")
        async with self.engine.begin() as conn:
            return await completion.complete(conn, self.pinned, job_id, token, done, self.clock())

    async def release_job(self, job_id: str, token: int, reason: str) -> str:
        async with self.engine.begin() as conn:
            return await queue.release(conn, self.pinned, job_id, token, reason, self.clock())

    async def export_run(self, ref: str) -> tuple[dict, set[str]]:
        """A run's or import's rows (ID or label), or one trial's (an attempt or job ID)."""
        async with self.reads() as session:
            if kind_of(ref.rpartition("/")[2]) in ("attempt", "job"):
                found = await attemptreads.get_attempt(session, ref)
                rows = await exporting.export_rows(
                    session, await session.get(t.Run, found.attempt.run_id), found.trial.id
                )
            else:
                rows = await exporting.export_rows(session, await runreads.find_run(session, ref))
        return rows, exporting.blob_digests(rows)

    async def restore_run(self, rows: dict, events: dict[str, list[dict]], origin: exporting.Origin | None = None):
        """Restore an export as an import: its rows checked (exporting.check_rows), its tasks and
        harnesses recomputed from what their digests cover (verify.py), all or nothing."""
        now = self.clock()
        exporting.check_rows(rows, now)
        exporting.check_events(events, rows["attempts"])
        missing = self.missing_blobs(sorted(exporting.blob_digests(rows)))
        if missing:
            raise InvalidArgument(f"{len(missing)} blobs the export needs are not stored (first {missing[0]})")
        await asyncio.to_thread(self._verify_records, rows)
        async with self.sessions.begin() as session:
            run = await exporting.restore_rows(session, rows, events, origin or exporting.Origin(), now)
            cells = await runreads.cells_of(session, run.id)
            await settled.keep_run(session, run, [cell.id for cell in cells])
            return run, cells

    def _verify_records(self, rows: dict) -> None:
        import_format = rows["runs"][0]["import_format"] if rows["runs"][0]["kind"] == "import" else ""
        for task in rows["tasks"]:
            task["record"] = verify.verify_task(task, self.blobs.get)
        for harness in rows["harnesses"]:
            harness["record"] = verify.verify_harness(harness, import_format)

    async def put_blobs(self, blobs: list[tuple[str, bytes]]) -> list[str]:
        # In a thread: writing files would hold up every other call this store serves.
        digests = await asyncio.to_thread(self.blobs.put_many, blobs)
        async with self.sessions.begin() as session:
            await records.record_blobs(session, [(d, len(b)) for d, (_, b) in zip(digests, blobs)], self.clock())
        return digests

    def get_blobs(self, digests: list[str]) -> list[bytes]:
        return [self.blobs.get(d) for d in digests]

    def missing_blobs(self, digests: list[str]) -> list[str]:
        return [d for d in digests if not self.blobs.has(d)]


def _refuse_import(run: t.Run) -> None:
    if run.kind == "import":
        raise FailedPrecondition(
            f"{run.label} ({run.id}) is an import: imports cannot be cancelled (their results were made elsewhere)"
        )


def _owner(worker: str) -> str:
    """A worker's name as the jobs table keeps it (cut to fit lease_owner)."""
    return sqlrows.fit(t.Job.__table__, dict(lease_owner=worker))["lease_owner"]
