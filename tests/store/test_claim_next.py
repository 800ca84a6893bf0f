"""CompleteJob with claim_next over real gRPC (127.0.0.1, port 0), on SQLite and PostgreSQL: the
store completes the job and claims the worker's next one in the same call, under the same rules
as ClaimJob (the run filter, leases); a stale token claims nothing, and a claim that fails leaves
the completion standing."""

import pytest

from hemra.services.common.errors import Unavailable
from hemra.v1 import common_pb2 as pb
from hemra.v1 import store_service_pb2 as spb
from tests.store.test_hostile_rpc import _aborted, _complete, _lease, served  # noqa: F401  (a fixture)
from tests.store.test_queue import plan


def _complete_and_claim(job: spb.Job, run: str = "") -> spb.CompleteJobRequest:
    request = _complete(job)
    request.claim_next.CopyFrom(_lease(30))
    request.claim_next.run = run
    return request


async def _states(stub, run_id: str) -> list[tuple[int, str]]:
    attempts = (await stub.ListAttempts(spb.ListAttemptsRequest(parent=f"runs/{run_id}"))).attempts
    return sorted((a.number, pb.AttemptState.Name(a.state)) for a in attempts)


async def test_complete_with_claim_next__works_a_run_with_one_claim(served):
    store, stub = served
    run, _ = await store.record_run(plan(trials=3))
    job = (await stub.ClaimJob(_lease(30))).job
    seen = []
    while job.id:
        seen.append(job.attempt.id)
        response = await stub.CompleteJob(_complete_and_claim(job))
        assert response.attempt.outcome == pb.OUTCOME_COMPLETED and response.attempt.id == seen[-1]
        job = response.next_job
        if job.id:  # a whole Job, as ClaimJob gives
            assert job.lease_token == 1 and job.attempt.harness_name and job.spec.label
    assert len(set(seen)) == 3 and not (await stub.ClaimJob(_lease(30))).HasField("job")
    assert await _states(stub, run.id) == [(1, "ATTEMPT_STATE_FINISHED")] * 3


async def test_claim_next__keeps_to_the_run_it_names(served):
    store, stub = served
    first, _ = await store.record_run(plan(trials=2))
    other, _ = await store.record_run(plan(trials=1))
    job = (await stub.ClaimJob(_lease(30))).job
    assert job.attempt.run_id == first.id  # the oldest job first
    response = await stub.CompleteJob(_complete_and_claim(job, run=other.id))
    assert response.next_job.attempt.run_id == other.id
    response = await stub.CompleteJob(_complete_and_claim(response.next_job, run=other.id))
    assert not response.HasField("next_job")  # the other run's one job is done; the first run's waits
    assert await _states(stub, first.id) == [(1, "ATTEMPT_STATE_FINISHED"), (1, "ATTEMPT_STATE_QUEUED")]


async def test_claim_next_with_a_stale_token__lease_lost_and_nothing_claimed(served):
    store, stub = served
    run, _ = await store.record_run(plan(trials=2, retries=1))
    job = (await stub.ClaimJob(_lease(30))).job
    stale = spb.Job(id=job.id, lease_token=job.lease_token + 1)
    assert await _aborted(stub.CompleteJob(_complete_and_claim(stale))) == "LEASE_LOST"
    assert await _states(stub, run.id) == [(1, "ATTEMPT_STATE_QUEUED"), (1, "ATTEMPT_STATE_RUNNING")]


async def test_a_claim_that_fails__leaves_the_completion_standing(served, monkeypatch):
    store, stub = served
    run, _ = await store.record_run(plan(trials=2))
    job = (await stub.ClaimJob(_lease(30))).job

    async def outage(*args, **kwargs):
        raise Unavailable("the database is away")

    monkeypatch.setattr(store, "claim_jobs", outage)
    response = await stub.CompleteJob(_complete_and_claim(job))
    assert response.attempt.outcome == pb.OUTCOME_COMPLETED and not response.HasField("next_job")
    assert await _states(stub, run.id) == [(1, "ATTEMPT_STATE_FINISHED"), (1, "ATTEMPT_STATE_QUEUED")]


@pytest.mark.parametrize("path", ["fast", "core"])
async def test_a_repeated_completion__hands_back_the_job_the_first_claimed(served, path):
    """The first answer lost (its commit made), the worker's client sends the completion again:
    the job the first one claimed comes back as it was, and no second job is leased (it would sit
    unworked until its lease expired, then fail as the infrastructure's fault). On either path:
    the database's own hot path, and queue.py's statements."""
    store, stub = served
    if path == "core":
        store.fast = None
    run, _ = await store.record_run(plan(trials=3))
    job = (await stub.ClaimJob(_lease(30))).job
    first = (await stub.CompleteJob(_complete_and_claim(job))).next_job
    again = await stub.CompleteJob(_complete_and_claim(job))
    assert again.attempt.outcome == pb.OUTCOME_COMPLETED and again.attempt.id == job.attempt.id
    assert (again.next_job.id, again.next_job.lease_token) == (first.id, first.lease_token)
    assert again.next_job.attempt.id == first.attempt.id and again.next_job.spec.label
    assert await _states(stub, run.id) == [
        (1, "ATTEMPT_STATE_FINISHED"),
        (1, "ATTEMPT_STATE_QUEUED"),
        (1, "ATTEMPT_STATE_RUNNING"),
    ]
    # Once that job is done, a repeat has nothing of its own to hand back: it claims anew.
    third = (await stub.CompleteJob(_complete_and_claim(first))).next_job
    late = await stub.CompleteJob(_complete_and_claim(job))
    assert third.id and not late.HasField("next_job")  # the one job left is the third's


async def test_a_repeated_completion__claims_anew_once_the_first_claims_lease_expired(served):
    store, stub = served
    await store.record_run(plan(trials=3, retries=1))
    job = (await stub.ClaimJob(_lease(30))).job
    first = (await stub.CompleteJob(_complete_and_claim(job))).next_job
    store.clock.now += 31  # the first claim's lease is over: recovery owns that job now
    again = (await stub.CompleteJob(_complete_and_claim(job))).next_job
    assert again.id and again.id != first.id
