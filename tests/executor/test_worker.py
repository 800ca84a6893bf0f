"""The executor's loop against a real store over gRPC (127.0.0.1, port 0): a job claimed while
the worker is stopping goes straight back to the queue, never started and never left to its lease."""

import asyncio

import grpc
import pytest

from hemra.services.common import transport
from hemra.services.executor import attempt
from hemra.services.executor.worker import Worker
from hemra.services.store.server import build_server
from hemra.services.store.service import Store
from hemra.v1 import common_pb2 as pb
from hemra.v1 import store_service_pb2 as spb
from hemra.v1 import store_service_pb2_grpc as spb_grpc
from tests.store.test_queue import FakeClock, plan


class HeldClaims:
    """The real store's client, whose ClaimJob answers only once the test lets it."""

    def __init__(self, stub):
        self.stub = stub
        self.asked = asyncio.Event()
        self.answer = asyncio.Event()

    def __getattr__(self, name):
        return getattr(self.stub, name)

    async def ClaimJob(self, request):
        response = await self.stub.ClaimJob(request)
        self.asked.set()
        await self.answer.wait()
        return response


@pytest.mark.parametrize("slots", [1, 3])
async def test_jobs_claimed_while_stopping__are_released_not_started(tmp_path, slots):
    store = await Store.open(f"sqlite+aiosqlite:///{tmp_path / 'hemra.db'}", tmp_path / "blobs", FakeClock())
    server, port = build_server(store, "127.0.0.1:0")
    await transport.start(server)
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
    try:
        run, _ = await store.record_run(plan(trials=slots, retries=0))
        held = HeldClaims(spb_grpc.StoreServiceStub(channel))
        deps = attempt.Deps(held, None, None, None, tmp_path, "", "w1", 30.0, 10.0)
        worker = Worker(deps, concurrency=slots)
        loop = asyncio.create_task(worker.run())
        await held.asked.wait()  # the store has handed out the job; its answer is on the way
        stopping = asyncio.create_task(worker.stop())
        await asyncio.sleep(0)
        held.answer.set()
        await asyncio.wait_for(asyncio.gather(stopping, loop), 10)
        assert worker.completed == 0 and not worker.active  # never started
        attempts = (await held.ListAttempts(spb.ListAttemptsRequest(parent=f"runs/{run.id}"))).attempts
        assert [(a.number, a.error) for a in attempts if a.state != pb.ATTEMPT_STATE_QUEUED] == [
            (1, "released: worker stopped")
        ] * slots
        # Queued again at once, no retry used.
        assert [a.number for a in attempts if a.state == pb.ATTEMPT_STATE_QUEUED] == [2] * slots
    finally:
        await channel.close()
        await server.stop(grace=None)
        await store.close()


class CountedClaims:
    """The real store's client, counting the ClaimJob calls that got jobs, and the jobs."""

    def __init__(self, stub):
        self.stub = stub
        self.calls = 0
        self.claimed = 0

    def __getattr__(self, name):
        return getattr(self.stub, name)

    async def ClaimJob(self, request):
        response = await self.stub.ClaimJob(request)
        got = len(attempt.claimed(response))
        self.calls += got > 0
        self.claimed += got
        return response

    async def CompleteJob(self, request, retry_for: float = 0):
        return await self.stub.CompleteJob(request)


def _completing(gate: asyncio.Event | None = None):
    """attempt.work reduced to its completion through the real store (attempt._complete), so the
    worker's slots and the store's claim_next are what is tested. With `gate`, the slot asks for
    its next job first and completes once the gate opens (a completion in flight)."""

    async def work(job, deps, control, claim_next):
        wanted = claim_next()
        if gate is not None:
            await gate.wait()
        return await attempt._complete(deps, job, wanted, pb.OUTCOME_COMPLETED, 0, "", 0.0)

    return work


async def _served(tmp_path):
    store = await Store.open(f"sqlite+aiosqlite:///{tmp_path / 'hemra.db'}", tmp_path / "blobs", FakeClock())
    server, port = build_server(store, "127.0.0.1:0")
    await transport.start(server)
    return store, server, grpc.aio.insecure_channel(f"127.0.0.1:{port}")


async def test_slots_take_their_next_job_with_each_completion(tmp_path, monkeypatch):
    store, server, channel = await _served(tmp_path)
    try:
        run, _ = await store.record_run(plan(trials=7, concurrency=7))
        counted = CountedClaims(spb_grpc.StoreServiceStub(channel))
        monkeypatch.setattr(attempt, "work", _completing())
        worker = Worker(attempt.Deps(counted, None, None, None, tmp_path, "", "w1", 30.0, 10.0), concurrency=2)
        await asyncio.wait_for(worker.run(until_idle=True), 10)
        assert worker.completed == 7 and not worker.active
        # Both slots in one call (max_jobs 2); every later job came with a completion.
        assert (counted.calls, counted.claimed) == (1, 2)
        attempts = (await counted.ListAttempts(spb.ListAttemptsRequest(parent=f"runs/{run.id}"))).attempts
        assert sorted(pb.AttemptState.Name(a.state) for a in attempts) == ["ATTEMPT_STATE_FINISHED"] * 7
    finally:
        await channel.close()
        await server.stop(grace=None)
        await store.close()


async def test_next_job_handed_over_while_stopping__is_released_not_started(tmp_path, monkeypatch):
    store, server, channel = await _served(tmp_path)
    try:
        run, _ = await store.record_run(plan(trials=2, retries=0))
        counted = CountedClaims(spb_grpc.StoreServiceStub(channel))
        gate = asyncio.Event()
        monkeypatch.setattr(attempt, "work", _completing(gate))
        worker = Worker(attempt.Deps(counted, None, None, None, tmp_path, "", "w1", 30.0, 10.0), concurrency=1)
        loop = asyncio.create_task(worker.run())
        while not worker.active:
            await asyncio.sleep(0.01)
        stopping = asyncio.create_task(worker.stop())
        await asyncio.sleep(0)
        gate.set()  # the completion (asked before stop) comes back with the second job
        await asyncio.wait_for(asyncio.gather(stopping, loop), 10)
        assert worker.completed == 1 and not worker.active
        attempts = (await counted.ListAttempts(spb.ListAttemptsRequest(parent=f"runs/{run.id}"))).attempts
        assert sorted((a.number, a.state, a.error) for a in attempts) == [
            (1, pb.ATTEMPT_STATE_FINISHED, ""),
            (1, pb.ATTEMPT_STATE_FINISHED, "released: worker stopped"),
            (2, pb.ATTEMPT_STATE_QUEUED, ""),
        ]
    finally:
        await channel.close()
        await server.stop(grace=None)
        await store.close()
