"""Values that were accepted and then broke things (issue 12, items 5-7), on SQLite and PostgreSQL:
rewards out of range, strings longer than their columns, page tokens past any integer."""

import pytest

from hemra.services.common.errors import InvalidArgument
from hemra.services.domain import rewards, vocabulary
from hemra.services.store import convert, pagetokens
from hemra.v1 import common_pb2 as pb
from hemra.v1 import store_service_pb2 as spb
from tests.store.test_hostile_rpc import _lease, served  # noqa: F401  (a fixture)
from tests.store.test_queue import plan

SCORED = "SCORE_STATE_SCORED"


@pytest.mark.parametrize("reward", [1e308, float("inf"), float("-inf"), float("nan"), 1.5e12, -1e13])
async def test_completion_with_a_reward_out_of_range__recorded_as_a_scorer_failure(reward, served):  # noqa: F811
    store, stub = served
    run, _ = await store.record_run(plan(trials=1))
    job = (await stub.ClaimJob(_lease(30))).job
    await stub.CompleteJob(
        spb.CompleteJobRequest(
            job=job.id,
            lease_token=job.lease_token,
            outcome=pb.OUTCOME_COMPLETED,
            score=pb.Score(state=pb.SCORE_STATE_SCORED, rewards={"reward": reward}),
        )
    )
    attempt = (await stub.GetAttempt(spb.GetAttemptRequest(attempt=job.attempt.id))).attempt
    assert attempt.score.state == pb.SCORE_STATE_SCORER_FAILED and not attempt.score.rewards
    assert "outside the range a reward may have" in attempt.score.error
    report = (await stub.GetRunReport(spb.GetRunReportRequest(run=run.id))).report
    assert report.datasets[0].rows[0].scorer_failed == 1


def _stored(rewards: dict) -> dict:
    return dict(
        outcome="completed",
        error="",
        agent_version="",
        agent_name="",
        start_time=1.0,
        end_time=2.0,
        artifacts=[],
        score={"state": SCORED, "rewards": rewards, "scorerFingerprint": "sha256:f"},
    )


HOSTILE = [
    {"reward": 1e308},
    {"reward": 1e308},
    {"reward": -1e308},
    {"reward": "Infinity"},
    {"reward": "abc"},
    {"reward": None},
    {"reward": [1]},
    {"reward": True},
    {"reward": 0.5},
    {"reward": 1},
]


async def test_report_compare_and_show_of_any_stored_reward__never_fail(served):  # noqa: F811
    """Rewards recorded before they had a range (planted here straight into the tables)."""
    store, stub = served
    runs = []
    for label in ("a", "b"):
        planned = plan(trials=len(HOSTILE), label=label)
        planned.trials = [(0, "sha256:t", "task", k + 1, _stored(r)) for k, r in enumerate(HOSTILE)]
        runs.append((await store.record_run(planned))[0])
    for run in runs:
        report = (await stub.GetRunReport(spb.GetRunReportRequest(run=run.id))).report
        row = report.datasets[0].rows[0]
        assert row.graded == 2 and row.scorer_failed == len(HOSTILE) - 2
        attempts = (await stub.ListAttempts(spb.ListAttemptsRequest(parent=run.id))).attempts
        assert len(attempts) == len(HOSTILE)
        assert sum("not usable" in a.score.error for a in attempts) == len(HOSTILE) - 2
    comparison = (await stub.CompareSides(spb.CompareSidesRequest(a=runs[0].id, b=runs[1].id))).comparison
    assert comparison.paired_tasks == 1
    # criterion tables read rewards too
    await stub.GetCriterionTable(spb.GetCriterionTableRequest(dataset="ds"))


async def test_event_type_and_name_longer_than_their_columns__kept_alike_on_both(store):
    await store.record_run(plan(trials=1))
    claimed = await store.claim_job("w" * 500, 30)
    events = [
        dict(time=1.0, type="t" * 41, name="n" * 400, payload='{"x": "a\0b"}', duration=0.0),
        dict(time=2.0, type="status", name="ok", payload="{}", duration=0.0),
    ]
    assert await store.append_events(claimed.job.id, claimed.job.lease_token, events) == 2
    stored, _ = await store.list_events(claimed.attempt.id, 10, "")
    assert [len(e.type) for e in stored] == [40, 6] and len(stored[0].name) == 300
    assert stored[0].type.endswith("\u2026") and "\0" not in stored[0].payload
    done = await store.complete_job(
        claimed.job.id, claimed.job.lease_token, records_completion(agent_version="v" * 200, agent_name="x" * 400)
    )
    assert len(done[0].agent_version) == 100 and len(done[0].agent_name) == 300


def records_completion(**fields):
    from hemra.services.store.completion import Completion

    return Completion(vocabulary.COMPLETED, score={"state": SCORED, "rewards": {"reward": 1.0}}, **fields)


@pytest.mark.parametrize(
    "field,value",
    [
        ("label", "x" * 400),
        ("label", "a\0b"),
        ("task_name", "t" * 301),
        ("model", "m" * 301),
        ("harness_name", "h" * 301),
    ],
)
async def test_names_longer_than_their_columns__refused_alike_on_both(field, value, store):
    planned = plan(trials=1)
    if field == "label":
        planned.label = value
    elif field == "task_name":
        planned.tasks[0]["task_name"] = value
    elif field == "model":
        planned.cells = [("sha256:d", "ds", "sha256:h", "h", value)]
    else:
        planned.harnesses[0]["harness_name"] = value
    with pytest.raises(InvalidArgument) as refused:
        await store.record_run(planned)
    assert field in str(refused.value) and "\n" not in str(refused.value)
    assert (await store.list_runs(10, ""))[0] == []


async def test_events_page_token_past_any_integer__empty_or_refused_alike_on_both(store):
    await store.record_run(plan(trials=1))
    claimed = await store.claim_job("w1", 30)
    await store.append_events(
        claimed.job.id, claimed.job.lease_token, [dict(time=1.0, type="status", name="x", payload="{}", duration=0.0)]
    )
    for seq in (2147483647, 2**62, 2**63 - 1):
        assert await store.list_events(claimed.attempt.id, 10, "", after_seq=seq) == ([], "")
    with pytest.raises(InvalidArgument, match="must not be negative"):
        await store.list_events(claimed.attempt.id, 10, "", after_seq=-1)
    # Page tokens are the store's own: a sequence number, or one it did not make ("runs-1"), is refused.
    for token in ("1", "\u00b2", "-1", "1.5", "9" * 31, "\u0663", "cnVucy0x", "%%%"):
        with pytest.raises(InvalidArgument, match="malformed page token"):
            await store.list_events(claimed.attempt.id, 10, token)
    assert await store.list_events(claimed.attempt.id, 10, pagetokens.events_token(2**62)) == ([], "")


@pytest.fixture
async def store(served):  # noqa: F811
    yield served[0]


def test_reward_rule():
    assert rewards.reward_problem({"a": 1e12, "b": -1e12, "c": 0}) == ""
    for bad in ({"a": 1e12 + 1}, {"a": float("nan")}, {"a": "1"}, {"a": True}, [1], None):
        assert rewards.reward_problem(bad)
    assert convert.score_from_dict({"state": SCORED, "rewards": {"r": "abc", "s": 1}}).rewards == {"s": 1.0}
