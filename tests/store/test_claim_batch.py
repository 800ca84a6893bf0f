"""ClaimJob with max_jobs over real gRPC (127.0.0.1, port 0), on SQLite and PostgreSQL, on the
database's own hot path and on queue.py's statements: a worker with free slots leases up to that
many jobs in one call, each with a lease of its own; a run's concurrency holds across the batch
and across racing claimers; a completion repeated after its answer was lost hands back every job
the first one claimed; a max_jobs out of bounds is refused before anything changes."""

import asyncio

import grpc
import pytest

from hemra.services.common import transport
from hemra.v1 import common_pb2 as pb
from hemra.v1 import store_service_pb2 as spb
from tests.store.test_claim_next import _states
from tests.store.test_hostile_rpc import _complete, _lease, served  # noqa: F401  (a fixture)
from tests.store.test_queue import plan

PATHS = ["fast", "core"]


def _batch(count: int, worker: str = "w1", lease: float = 30) -> spb.ClaimJobRequest:
    request = _lease(lease)
    request.worker, request.max_jobs = worker, count
    return request


def _on(store, path: str) -> None:
    if path == "core":
        store.fast = None


@pytest.mark.parametrize("path", PATHS)
async def test_a_batch__leases_the_oldest_jobs_each_with_its_own_lease(served, path):
    store, stub = served
    _on(store, path)
    run, _ = await store.record_run(plan(trials=5))
    response = await stub.ClaimJob(_batch(3))
    assert not response.HasField("job")  # a batch answers in jobs
    jobs = list(response.jobs)
    assert [j.attempt.repetition for j in jobs] == [1, 2, 3]
    assert len({j.id for j in jobs}) == 3 and all(j.lease_token == 1 and j.spec.label for j in jobs)
    # Each lease stands alone: one heartbeat, one completion, the others untouched.
    beat = spb.HeartbeatJobRequest(job=jobs[1].id, lease_token=jobs[1].lease_token)
    beat.lease.FromSeconds(30)
    await stub.HeartbeatJob(beat)
    await stub.CompleteJob(_complete(jobs[0]))
    store.clock.now += 31  # the two never completed expire; the third, beaten at +0, too
    rest = list((await stub.ClaimJob(_batch(10))).jobs)
    assert [j.attempt.repetition for j in rest] == [4, 5]  # the batch takes what is left
    assert not (await stub.ClaimJob(_batch(10))).jobs
    states = await _states(stub, run.id)
    assert states.count((1, "ATTEMPT_STATE_FINISHED")) == 3  # one completed, two closed as lost
    assert states.count((1, "ATTEMPT_STATE_RUNNING")) == 2


@pytest.mark.parametrize("path", PATHS)
async def test_a_batch__keeps_to_the_runs_concurrency(served, path):
    store, stub = served
    _on(store, path)
    run, _ = await store.record_run(plan(trials=6, concurrency=2))
    first = list((await stub.ClaimJob(_batch(5))).jobs)
    assert len(first) == 2 and not (await stub.ClaimJob(_batch(5, worker="w2"))).jobs
    response = await stub.CompleteJob(_complete(first[0]))
    assert response.attempt.outcome == pb.OUTCOME_COMPLETED
    assert len((await stub.ClaimJob(_batch(5, worker="w2"))).jobs) == 1  # the one slot it freed


@pytest.mark.parametrize("path", PATHS)
async def test_racing_batches__never_lease_a_job_twice_nor_past_the_runs_limit(served, path):
    store, stub = served
    _on(store, path)
    run, _ = await store.record_run(plan(trials=30, concurrency=7))
    leased: list[spb.Job] = []
    held = {"now": 0, "most": 0}  # jobs between their claim's answer and their completion's

    async def executor(name: str) -> None:
        while jobs := list((await stub.ClaimJob(_batch(3, worker=name))).jobs):
            leased.extend(jobs)
            held["now"] += len(jobs)
            held["most"] = max(held["most"], held["now"])
            for job in jobs:
                await asyncio.sleep(0)  # let the others claim meanwhile
                await stub.CompleteJob(_complete(job))
                held["now"] -= 1

    await asyncio.gather(*(executor(f"w{i}") for i in range(5)))
    assert len({j.id for j in leased}) == len(leased) == 30
    assert 3 < held["most"] <= 7  # several batches ran at once, never past the run's limit
    assert await _states(stub, run.id) == [(1, "ATTEMPT_STATE_FINISHED")] * 30


@pytest.mark.parametrize("path", PATHS)
async def test_claim_next_batch__a_repeated_completion_hands_back_every_job_the_first_claimed(served, path):
    store, stub = served
    _on(store, path)
    run, _ = await store.record_run(plan(trials=5))
    job = (await stub.ClaimJob(_lease(30))).job
    request = _complete(job)
    request.claim_next.CopyFrom(_batch(3))
    first = await stub.CompleteJob(request)
    assert not first.HasField("next_job") and len(first.next_jobs) == 3
    again = await stub.CompleteJob(request)  # the first answer was lost
    assert [(j.id, j.lease_token) for j in again.next_jobs] == [(j.id, j.lease_token) for j in first.next_jobs]
    states = await _states(stub, run.id)
    assert states.count((1, "ATTEMPT_STATE_RUNNING")) == 3 and states.count((1, "ATTEMPT_STATE_QUEUED")) == 1


@pytest.mark.parametrize("max_jobs", [-1, 1001, 2**31 - 1])
async def test_max_jobs_out_of_bounds__refused_and_nothing_leased_or_completed(served, max_jobs):
    store, stub = served
    run, _ = await store.record_run(plan(trials=2))
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await stub.ClaimJob(_batch(max_jobs))
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "max_jobs must be from 0 to 1000" in caught.value.details()
    job = (await stub.ClaimJob(_lease(30))).job
    request = _complete(job)
    request.claim_next.CopyFrom(_batch(max_jobs))
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await stub.CompleteJob(request)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert transport.error_reason(caught.value.trailing_metadata()) == "INVALID_ARGUMENT"
    assert await _states(stub, run.id) == [(1, "ATTEMPT_STATE_QUEUED"), (1, "ATTEMPT_STATE_RUNNING")]


async def test_max_jobs_zero_or_one__answers_in_job_as_before(served):
    store, stub = served
    await store.record_run(plan(trials=2))
    for count in (0, 1):
        response = await stub.ClaimJob(_batch(count))
        assert response.HasField("job") and not response.jobs
