"""The executor's loop: claim jobs while a slot is free, work each in its own task."""

import asyncio
import logging
import os
import socket

from hemra.services.common import errors
from hemra.services.executor import attempt, sandboxes
from hemra.services.executor.harbor import supervise as harbor
from hemra.v1 import store_service_pb2 as spb

logger = logging.getLogger(__name__)

#: How long to wait before asking again when the queue had nothing for us.
IDLE_POLL_SECS = (0.05, 1.0)


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


class Worker:
    def __init__(self, deps: attempt.Deps, concurrency: int, run_id: str = "", pool: str = ""):
        # Every call this worker's attempts make to the store and the scorer is watched: a store
        # that cannot write stops the worker (see _unwritable).
        deps.store = _Watched(deps.store, self._unwritable)
        deps.scorer = _Watched(deps.scorer, self._unwritable)
        self.deps = deps
        self.concurrency = max(concurrency, 1)
        self.run_id = run_id
        #: Only runs of this executor pool ("" for any).
        self.pool = pool
        self.active: dict[str, asyncio.Task] = {}
        self._controls: dict[str, attempt.Control] = {}
        self.completed = 0
        self._wake = asyncio.Event()
        self._stopping = False
        #: Why the store could not write, once a call found so: the worker stopped for it.
        self.unwritable: errors.StoreUnwritable | None = None
        #: Jobs the store could not take back (their release or completion was refused).
        self._left_leased = 0

    async def run(self, until_idle: bool = False) -> None:
        """Work the queue; with `until_idle`, return once it has nothing left for us. Raises
        StoreUnwritable once the store cannot write, after handing back what it was working."""
        try:
            await self._work(until_idle)
        finally:
            if self.unwritable is not None:
                await self._drain()
        if self.unwritable is not None:
            raise self._stopped_because()

    async def _work(self, until_idle: bool) -> None:
        idle = IDLE_POLL_SECS[0]
        while not self._stopping:
            free = self.concurrency - len(self.active)
            if free <= 0:
                await self._wait_for_slot()
                continue
            # Every free slot in one call: completions refill only their own slot (claim_next),
            # so nothing else claims for these meanwhile.
            jobs = await self._claim(free)
            if jobs and self._stopping:  # claimed while stop() was handing back
                for job in jobs:
                    await attempt.release(self.deps, job)
                return
            if jobs:
                idle = IDLE_POLL_SECS[0]
                await self._start_all(jobs)
                continue
            if until_idle and not self.active:
                return
            await self._wait_for_slot(timeout=idle)
            idle = min(idle * 2, IDLE_POLL_SECS[1])

    async def _start_all(self, jobs: list) -> None:
        """Start each claimed job in a slot of its own; a harbor cell's jobs in one slot, with
        the rest of its cell gathered before the next claim (no other slot of ours takes them)."""
        cells: dict[str, list] = {}
        for job in jobs:
            if harbor.is_harbor(job):
                cells.setdefault(job.attempt.cell_id, []).append(job)
            else:
                self._start(job)
        for claimed in cells.values():
            gathered = await harbor.gather(self.deps, claimed[0], self._claim_request())
            self._start_harbor(claimed + gathered[1:])

    def _claim_request(self, max_jobs: int = 1) -> spb.ClaimJobRequest:
        request = spb.ClaimJobRequest(worker=self.deps.worker, run=self.run_id, pool=self.pool, max_jobs=max_jobs)
        request.lease.FromNanoseconds(int(self.deps.lease_secs * 1e9))
        return request

    def _next_claim(self) -> spb.ClaimJobRequest | None:
        """What a finishing attempt asks the store for with its completion: the next job for
        its slot (nothing once the worker is stopping)."""
        return None if self._stopping else self._claim_request()

    async def _claim(self, free: int) -> list:
        """Up to `free` jobs (none when the store has nothing for us or cannot be reached)."""
        try:
            response = await self.deps.store.ClaimJob(self._claim_request(free))
        except errors.Unauthenticated:
            raise  # no point retrying a wrong token
        except errors.StoreUnwritable:
            return []  # the worker stops (_unwritable); queued jobs stay queued
        except errors.HemraError as exc:  # the store is down or restarting: back off, keep going
            logger.warning("store unavailable (%s), backing off: %s", exc.code.name, exc)
            return []
        return attempt.claimed(response)

    def _start(self, job) -> None:
        self._take(asyncio.create_task(self._slot(job)), job)

    def _start_harbor(self, jobs: list) -> None:
        """One slot supervises one `harbor run` for all of `jobs` (one harbor cell's)."""
        first = jobs[0].attempt.id
        control = attempt.Control()
        self.active[first] = asyncio.create_task(self._harbor_slot(jobs, control))
        for job in jobs:
            self._controls[job.attempt.id] = control

    async def _harbor_slot(self, jobs: list, control: attempt.Control) -> None:
        try:
            await harbor.supervise(jobs, self.deps, control)
        finally:
            for job in jobs[1:]:
                self._controls.pop(job.attempt.id, None)
            self._done(jobs[0].attempt.id)

    def _take(self, slot: asyncio.Task, job) -> attempt.Control:
        """`job` holds a slot from now on: counted before the claim loop runs again."""
        control = self._controls[job.attempt.id] = attempt.Control()
        self.active[job.attempt.id] = slot
        return control

    async def _slot(self, job) -> None:
        """Work `job` in a slot, then each job the store hands the slot with a completion."""
        control = self._controls[job.attempt.id]
        while True:
            try:
                next_job = await attempt.work(job, self.deps, control, self._next_claim)
            finally:
                self._done(job.attempt.id)
            if next_job is None:
                return
            if self._stopping:  # handed over while stop() was releasing
                await attempt.release(self.deps, next_job)
                return
            if harbor.is_harbor(next_job):  # a harbor cell's trial, handed over with a completion
                # Counted while its cell is gathered, so an idle worker does not stop meanwhile.
                self._take(asyncio.current_task(), next_job)
                jobs = await harbor.gather(self.deps, next_job, self._claim_request())
                self.active.pop(next_job.attempt.id, None)
                self._start_harbor(jobs)  # which holds the slot from here (no await in between)
                return
            job, control = next_job, self._take(asyncio.current_task(), next_job)

    def _done(self, attempt_id: str) -> None:
        self.active.pop(attempt_id, None)
        self._controls.pop(attempt_id, None)
        self.completed += 1
        self._wake.set()

    async def _wait_for_slot(self, timeout: float | None = None) -> None:
        self._wake.clear()
        try:
            await asyncio.wait_for(self._wake.wait(), timeout)
        except TimeoutError:
            pass

    async def stop(self, release: bool = True) -> None:
        """Stop claiming. With `release`, hand running attempts' jobs back to the queue
        (each is retried as a new attempt at once); else wait for them to finish."""
        self._stopping = True
        self._wake.set()
        if release:
            self._release_all()
        await self._drain()

    def _release_all(self) -> None:
        for control in list(self._controls.values()):
            control.stop("released")

    async def _drain(self) -> None:
        while running := [task for task in self.active.values() if not task.done()]:
            await asyncio.gather(*running, return_exceptions=True)
        # Every attempt has torn its sandbox down: whatever one left (a container) goes now.
        await asyncio.to_thread(sandboxes.remove_own)

    def _unwritable(self, exc: errors.StoreUnwritable, rpc: str) -> None:
        """A call found that the store cannot write (a full or read-only file system, a database
        that refuses writes): stop claiming, and hand running attempts back. Nothing they do
        now could be recorded; queued jobs stay queued for when the store can write again."""
        if rpc in ("ReleaseJob", "CompleteJob"):
            self._left_leased += 1
        if self.unwritable is None:
            self.unwritable = exc
            self._stopping = True
            self._wake.set()
            self._release_all()

    def _stopped_because(self) -> errors.StoreUnwritable:
        """The one line the worker stops with: the store's reason, and where its work is."""
        left, count = "", self._left_leased
        if count:
            left = (
                f"; {count} running attempt{'s' if count > 1 else ''} could not be handed back: once "
                f"{'their leases' if count > 1 else 'its lease'} ({self.deps.lease_secs:g} s) "
                f"{'run' if count > 1 else 'runs'} out, the next claim closes "
                f"{'them' if count > 1 else 'it'} as a lost worker's (an infrastructure failure)"
            )
        return errors.StoreUnwritable(f"{self.unwritable}; stopped claiming, queued trials stay queued{left}")


class _Watched:
    """A service client whose calls tell `on_unwritable(exc, rpc)` when the store cannot write."""

    def __init__(self, client, on_unwritable):
        self._client = client
        self._on_unwritable = on_unwritable

    def __getattr__(self, name: str):
        method = getattr(self._client, name)
        if not name[:1].isupper():  # an attribute of the client (its channel), not an RPC
            return method

        async def call(*args, **kwargs):
            try:
                return await method(*args, **kwargs)
            except errors.StoreUnwritable as exc:
                self._on_unwritable(exc, name)
                raise

        return call
