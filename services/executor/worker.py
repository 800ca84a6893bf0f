"""The executor's loop: claim jobs while a slot is free, work each in its own task."""

import asyncio
import logging
import os
import socket

from hemra.v1 import store_service_pb2 as spb
from services.common import errors
from services.executor import attempt, sandboxes

logger = logging.getLogger(__name__)

#: How long to wait before asking again when the queue had nothing for us.
IDLE_POLL_SECS = (0.05, 1.0)


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


class Worker:
    def __init__(self, deps: attempt.Deps, concurrency: int, run_id: str = "", pool: str = ""):
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

    async def run(self, until_idle: bool = False) -> None:
        """Work the queue; with `until_idle`, return once it has nothing left for us."""
        idle = IDLE_POLL_SECS[0]
        while not self._stopping:
            if len(self.active) >= self.concurrency:
                await self._wait_for_slot()
                continue
            job = await self._claim()
            if job is not None and self._stopping:  # claimed while stop() was handing back
                await attempt.release(self.deps, job)
                return
            if job is not None:
                idle = IDLE_POLL_SECS[0]
                self._start(job)
                continue
            if until_idle and not self.active:
                return
            await self._wait_for_slot(timeout=idle)
            idle = min(idle * 2, IDLE_POLL_SECS[1])

    def _claim_request(self) -> spb.ClaimJobRequest:
        request = spb.ClaimJobRequest(worker=self.deps.worker, run=self.run_id, pool=self.pool)
        request.lease.FromNanoseconds(int(self.deps.lease_secs * 1e9))
        return request

    def _next_claim(self) -> spb.ClaimJobRequest | None:
        """What a finishing attempt asks the store for with its completion: the next job for
        its slot (nothing once the worker is stopping)."""
        return None if self._stopping else self._claim_request()

    async def _claim(self):
        try:
            response = await self.deps.store.ClaimJob(self._claim_request())
        except errors.Unauthenticated:
            raise  # no point retrying a wrong token
        except errors.HemraError as exc:  # the store is down or restarting: back off, keep going
            logger.warning("store unavailable (%s), backing off: %s", exc.code.name, exc)
            return None
        return response.job if response.HasField("job") else None

    def _start(self, job) -> None:
        self._take(asyncio.create_task(self._slot(job)), job)

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
            for control in list(self._controls.values()):
                control.stop("released")
        while running := [task for task in self.active.values() if not task.done()]:
            await asyncio.gather(*running, return_exceptions=True)
        # Every attempt has torn its sandbox down: whatever one left (a container) goes now.
        await asyncio.to_thread(sandboxes.remove_own)
