"""The usage HEMRA's model relay read itself (`usage_observed` events) is summed apart from the
usage the harness reported, on SQLite and PostgreSQL, and shown beside it on the attempt."""

import json

from hemra.services.executor.events import EventLog, event
from hemra.services.store import convert, usage
from hemra.v1 import common_pb2 as pb
from tests.store.test_queue import plan
from tests.store.test_usage import store  # noqa: F401 - the fixture, used by name

__all__ = ["store"]


def _event(kind: str, payload: dict) -> dict:
    return {"time": 1.0, "type": kind, "name": "relay", "payload": json.dumps(payload)}


OBSERVED = {
    "input_tokens": 1200,
    "output_tokens": 80,
    "cache_read_input_tokens": 4000,
    "cache_creation_input_tokens": 16,
    "model_calls": 3,
    "unreadable": 1,
}


async def test_usage_observed__summed_apart_and_shown_beside_the_reported(store):  # noqa: F811
    run, _ = await store.record_run(plan(trials=1))
    claimed = await store.claim_job("w1", 30)
    job, token = claimed.job.id, claimed.job.lease_token
    batch = [_event("usage", {"input_tokens": 1000, "output_tokens": 80}), _event(usage.USAGE_OBSERVED, OBSERVED)]
    assert await store.append_events(job, token, batch, first_seq=1) == 2
    assert await store.append_events(job, token, batch, first_seq=1) == 2  # a repeat adds nothing
    attempt = _attempt(await store.get_attempt(claimed.attempt.id))
    assert attempt.usage == pb.ReportedUsage(input_tokens=1000, output_tokens=80, usage_events=1)
    assert attempt.usage_observed == pb.ObservedUsage(events=1, **OBSERVED)
    assert attempt.usage_differs  # the harness said 1000 input tokens, the relay read 1200
    # The run's usage (what harnesses reported) is not added to.
    [reported] = await store.attempt_usage(run.id)
    assert (reported.input_tokens, reported.output_tokens, reported.usage_events) == (1000, 80, 1)


async def test_usage_observed__equal_figures_are_both_shown_and_no_relay_shows_none(store):  # noqa: F811
    await store.record_run(plan(trials=2))
    same = await store.claim_job("w1", 30)
    batch = [_event("usage", {"input_tokens": 1200, "output_tokens": 80}), _event(usage.USAGE_OBSERVED, OBSERVED)]
    await store.append_events(same.job.id, same.job.lease_token, batch, first_seq=1)
    attempt = _attempt(await store.get_attempt(same.attempt.id))
    assert (attempt.usage.input_tokens, attempt.usage.output_tokens) == (1200, 80)
    assert (attempt.usage_observed.input_tokens, attempt.usage_observed.output_tokens) == (1200, 80)
    assert not attempt.usage_differs
    other = await store.claim_job("w2", 30)
    await store.append_events(other.job.id, other.job.lease_token, batch[:1], first_seq=1)
    alone = _attempt(await store.get_attempt(other.attempt.id))
    assert not alone.HasField("usage_observed") and not alone.usage_differs


async def test_event_log__only_hemra_writes_usage_observed():
    log = EventLog(store=None, job_id="j", lease_token=1)
    forged = event(usage.USAGE_OBSERVED, "relay", input_tokens=0, output_tokens=0, model_calls=0)
    log._admit(forged)  # what emit does with each event from the harness
    [kept] = log._pending
    assert kept.type == "error" and kept.name == "reserved_event"
    assert usage.of_events([{"type": kept.type, "payload": kept.payload_json}]) == usage.Usage()
    log._pending.clear()
    log._queue(forged, 0)  # emit_own's path: HEMRA's own
    assert (
        usage.of_events([{"type": e.type, "payload": e.payload_json} for e in log._pending]).observed[
            "usage_observed_events"
        ]
        == 1
    )


def _attempt(found):
    return convert.attempt_to_proto(found.attempt, found.trial, found.cell)
