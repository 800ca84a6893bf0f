"""The executor's loop against a real store over gRPC (127.0.0.1, port 0): a job claimed while
the worker is stopping goes straight back to the queue, never started and never left to its lease."""

import asyncio

import grpc

from hemra.v1 import common_pb2 as pb
from hemra.v1 import store_service_pb2 as spb
from hemra.v1 import store_service_pb2_grpc as spb_grpc
from services.common import transport
from services.executor import attempt
from services.executor.worker import Worker
from services.store.server import build_server
from services.store.service import Store
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


async def test_job_claimed_while_stopping__is_released_not_started(tmp_path):
    store = await Store.open(f"sqlite+aiosqlite:///{tmp_path / 'hemra.db'}", tmp_path / "blobs", FakeClock())
    server, port = build_server(store, "127.0.0.1:0")
    await transport.start(server)
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
    try:
        run, _ = await store.record_run(plan(trials=1, retries=0))
        held = HeldClaims(spb_grpc.StoreServiceStub(channel))
        deps = attempt.Deps(held, None, None, None, tmp_path, "", "w1", 30.0, 10.0)
        worker = Worker(deps, concurrency=1)
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
        ]
        assert [a.number for a in attempts if a.state == pb.ATTEMPT_STATE_QUEUED] == [2]  # at once, no retry used
    finally:
        await channel.close()
        await server.stop(grace=None)
        await store.close()
