"""Hostile calls to the store over real gRPC (127.0.0.1, port 0), on SQLite and PostgreSQL:
a stale lease token after its job was taken back is ABORTED with reason LEASE_LOST."""

import grpc
import pytest

from hemra.services.common import transport
from hemra.services.store.server import build_server
from hemra.services.store.service import Store
from hemra.v1 import common_pb2 as pb
from hemra.v1 import store_service_pb2 as spb
from hemra.v1 import store_service_pb2_grpc as spb_grpc
from tests.store.test_queue import FakeClock, plan


@pytest.fixture
async def served(database_url, tmp_path):
    store = await Store.open(database_url, tmp_path / "blobs", FakeClock())
    server, port = build_server(store, "127.0.0.1:0")
    await transport.start(server)
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
    yield store, spb_grpc.StoreServiceStub(channel)
    await channel.close()
    await server.stop(grace=None)
    await store.close()


def _lease(seconds: float) -> spb.ClaimJobRequest:
    request = spb.ClaimJobRequest(worker="w1")
    request.lease.FromNanoseconds(int(seconds * 1e9))
    return request


def _complete(job: spb.Job, outcome=pb.OUTCOME_COMPLETED) -> spb.CompleteJobRequest:
    return spb.CompleteJobRequest(
        job=job.id,
        lease_token=job.lease_token,
        outcome=outcome,
        score=pb.Score(state=pb.SCORE_STATE_SCORED, rewards={"reward": 1.0}),
    )


async def _aborted(call) -> str:
    """The ErrorInfo reason of a call that must fail with ABORTED."""
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call
    assert caught.value.code() == grpc.StatusCode.ABORTED, caught.value.details()
    return transport.error_reason(caught.value.trailing_metadata())


async def test_complete_with_a_stale_token_after_the_job_was_reclaimed__aborted_lease_lost(served):
    store, stub = served
    run, _ = await store.record_run(plan(trials=1, retries=1))
    first = (await stub.ClaimJob(_lease(30))).job
    store.clock.now += 31  # the worker stalls past its lease
    again = (await stub.ClaimJob(_lease(30))).job  # recovery closes it; its retry is claimed
    assert again.attempt.number == 2
    assert await _aborted(stub.CompleteJob(_complete(first))) == "LEASE_LOST"
    assert (
        await _aborted(stub.HeartbeatJob(spb.HeartbeatJobRequest(job=first.id, lease_token=first.lease_token)))
        == "LEASE_LOST"
    )
    lost = (await store.get_attempt(first.attempt.id)).attempt
    assert (lost.outcome, lost.score) == ("infra_failed", None)  # the late result changed nothing
    await stub.CompleteJob(_complete(again))
    assert (await stub.CompleteJob(_complete(again))).attempt.outcome == pb.OUTCOME_COMPLETED  # a repeat: same answer


async def test_complete_after_the_trial_was_cancelled_or_released__aborted_lease_lost(served):
    store, stub = served
    await store.record_run(plan(trials=2, retries=1))
    cancelled = (await stub.ClaimJob(_lease(30))).job
    released = (await stub.ClaimJob(_lease(30))).job
    await store.cancel(cancelled.attempt.id)
    await stub.ReleaseJob(spb.ReleaseJobRequest(job=released.id, lease_token=released.lease_token))
    for job in (cancelled, released):
        assert await _aborted(stub.CompleteJob(_complete(job))) == "LEASE_LOST"
    attempt = (await store.get_attempt(cancelled.attempt.id)).attempt
    assert attempt.outcome == "cancelled"
