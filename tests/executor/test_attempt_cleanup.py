"""An attempt on the Docker sandbox leaves no container behind on any path: here the store
refuses the event that says the verifier's container is ready (the container exists, nothing
holds it yet but the attempt), and the attempt closes as an infrastructure failure with both
of its containers removed. The real store over gRPC on 127.0.0.1 and the real engine."""

import shutil

import pytest

from hemra.services.common import errors
from hemra.services.executor import attempt, events
from hemra.services.executor.protocol import Grants
from hemra.services.executor.sandboxes.base import wait_for_removals
from hemra.services.executor.taskcache import TaskCache
from hemra.v1 import common_pb2 as pb
from hemra.v1 import store_service_pb2 as spb
from hemra.v1 import store_service_pb2_grpc as spb_grpc
from tests.executor.test_docker_sandbox import make_task
from tests.executor.test_worker import _served
from tests.store.test_queue import plan

pytestmark = pytest.mark.usefixtures("docker_engine")


class RefusedVerifierEvent:
    """The real store's client, whose AppendEvents fails on the batch naming the verifier's sandbox."""

    def __init__(self, stub):
        self.stub = stub
        self.refused = 0

    def __getattr__(self, name):
        return getattr(self.stub, name)

    async def AppendEvents(self, request, retry_for: float = 0):
        if any(e.name == "verifier_sandbox" for e in request.events):
            self.refused += 1
            raise errors.Unavailable("AppendEvents: the store went away")
        return await self.stub.AppendEvents(request)

    async def CompleteJob(self, request, retry_for: float = 0):
        return await self.stub.CompleteJob(request)


async def test_a_failed_event_write_at_the_verifier_leaves_no_container(tmp_path, docker_engine, monkeypatch):
    monkeypatch.setattr(events, "FLUSH_SECS", -1.0)  # every event is sent as it comes
    store, server, channel = await _served(tmp_path)
    try:
        await store.record_run(plan(trials=1))
        client = RefusedVerifierEvent(spb_grpc.StoreServiceStub(channel))
        request = spb.ClaimJobRequest(worker="w1")
        request.lease.FromNanoseconds(30 * 10**9)
        job = (await client.ClaimJob(request)).job
        task, task_dir = make_task(tmp_path)
        cache = TaskCache(tmp_path / "cache", client)
        cache.root.mkdir(parents=True)
        shutil.move(task_dir, cache.root / task.digest.removeprefix("sha256:"))
        job.task.CopyFrom(task)
        job.harness.CopyFrom(pb.Harness(kind="builtin", harness_name="nop"))
        job.spec.sandbox, job.spec.verifier_isolation = "docker", "fresh"
        deps = attempt.Deps(client, None, cache, Grants(), tmp_path / "work", "", "w1", 30.0, 10.0)

        assert await attempt.work(job, deps) is None
        wait_for_removals(30)

        assert client.refused == 1
        for label in (job.attempt.id, f"{job.attempt.id}-verifier"):
            assert docker_engine.api.containers(all=True, filters={"label": f"hemra.attempt={label}"}) == []
        [kept] = (await client.ListAttempts(spb.ListAttemptsRequest(parent=f"runs/{job.attempt.run_id}"))).attempts
        assert kept.outcome == pb.OUTCOME_INFRA_FAILED and "the store went away" in kept.error
    finally:
        await channel.close()
        await server.stop(grace=None)
        await store.close()
