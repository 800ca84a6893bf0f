"""compare's rubric criteria, on SQLite and PostgreSQL: each criterion judged on both sides of
a paired task pairs on its per-task mean; criteria judged by different models never pair."""

import pytest

from hemra.services.domain import vocabulary
from hemra.services.store import completion, records
from hemra.services.store.service import Store
from tests.store.test_queue import FakeClock

TASKS = ["alpha", "beta", "gamma"]


def two_harness_plan() -> records.PlannedRun:
    return records.PlannedRun(
        label="judged",
        spec={"label": "judged"},
        concurrency=10,
        max_infra_retries=0,
        datasets=[dict(digest="sha256:d", dataset_name="ds", source="/x", task_digests=[], create_time=0.0)],
        tasks=[dict(digest=f"sha256:{n}", task_name=n, record={}) for n in TASKS],
        harnesses=[dict(digest=f"sha256:{h}", harness_name=h, record={}) for h in ("a", "b")],
        cells=[("sha256:d", "ds", "sha256:a", "a", ""), ("sha256:d", "ds", "sha256:b", "b", "")],
        trials=[(cell, f"sha256:{n}", n, 1, None) for cell in (0, 1) for n in TASKS],
    )


def score(values: dict[str, float], model: str = "judge-x") -> dict:
    judgments = [
        {"judge": "quality", "source": "task", "criterion": name, "value": value, "judgeModel": model}
        for name, value in values.items()
    ]
    judgments.append({"judge": "quality", "source": "task", "criterion": "broken", "error": "no answer"})
    return {
        "state": "SCORE_STATE_SCORED",
        "rewards": {"reward": 1},
        "scorerFingerprint": "sha256:f",
        "judgments": judgments,
    }


#: (harness, task) -> the criteria its verifier judged; gamma's b side used another model.
JUDGED = {
    ("a", "alpha"): score({"clarity": 0.5, "tests": 1.0}),
    ("b", "alpha"): score({"clarity": 1.0, "tests": 1.0}),
    ("a", "beta"): score({"clarity": 0.25, "tests": 0.0}),
    ("b", "beta"): score({"clarity": 0.75, "tests": 1.0, "only_b": 1.0}),
    ("a", "gamma"): score({"clarity": 0.0}),
    ("b", "gamma"): score({"clarity": 1.0}, model="judge-y"),
}


@pytest.fixture
async def store(database_url, tmp_path):
    store = await Store.open(database_url, tmp_path / "blobs", FakeClock())
    yield store
    await store.close()


async def test_compare__criteria_pair_per_task_and_different_models_never(store):
    await store.record_run(two_harness_plan())
    while (claimed := await store.claim_job("w", 30)) is not None:
        done = completion.Completion(
            vocabulary.COMPLETED, score=JUDGED[claimed.cell.harness_name, claimed.trial.task_name]
        )
        await store.complete_job(claimed.job.id, claimed.job.lease_token, done)
    result = await store.compare("judged/a", "judged/b")
    assert result.paired_tasks == 3
    by_name = {c.criterion: c for c in result.criteria}
    assert set(by_name) == {"clarity", "tests"}  # "only_b" was judged on one side, "broken" never
    clarity = by_name["clarity"]
    assert (clarity.tasks, clarity.judge, clarity.source, clarity.judge_model) == (2, "quality", "task", "judge-x")
    assert (clarity.a_mean, clarity.b_mean, clarity.delta) == (0.375, 0.875, 0.5)
    tests = by_name["tests"]
    assert (tests.a_pass_rate, tests.b_pass_rate, tests.delta) == (0.5, 1.0, 0.5)
    assert [(x.task_name, x.reason) for x in result.criteria_not_comparable] == [
        ("gamma", "quality/clarity: judged by judge-x on side a, judge-y on side b")
    ]


async def test_report__each_judge_per_cell_with_its_failures_apart(store):
    run, _ = await store.record_run(two_harness_plan())
    clean = {
        "alpha": score({"clarity": 0.5, "tests": 1.0}),
        "beta": score({"clarity": 1.0, "tests": 1.0}),
        "gamma": score({"clarity": 1.0}),
    }
    for judged in clean.values():
        judged["judgments"] = [j for j in judged["judgments"] if not j.get("error")]
    clean["gamma"]["judgments"].append(
        {"judge": "quality", "source": "task", "criterion": "tests", "error": "timed out"}
    )
    while (claimed := await store.claim_job("w", 30)) is not None:
        judged = (
            clean[claimed.trial.task_name]
            if claimed.cell.harness_name == "a"
            else {"state": "SCORE_STATE_SCORED", "rewards": {"reward": 1}}
        )
        done = completion.Completion(vocabulary.COMPLETED, score=judged)
        await store.complete_job(claimed.job.id, claimed.job.lease_token, done)
    report = await store.run_report(run.id)
    rows = {row.harness_name: row for row in report.datasets[0].rows}
    [quality] = rows["a"].judges
    assert (quality.judge, quality.source, quality.judge_model) == ("quality", "task", "judge-x")
    # gamma had a criterion its judge could not judge: a failure, apart, not in the mean.
    assert (quality.judged, quality.mean, quality.passed, quality.failed) == (2, 0.875, 1, 1)
    assert rows["b"].judges == []


async def test_hostile_values__not_a_number_is_the_judges_failure_never_a_crash(store):
    """A restored export can hold any Score that parses: NaN, strings, a bool for a value."""
    run, _ = await store.record_run(two_harness_plan())
    odd = [{"judge": "q", "source": "task", "criterion": "c", "value": v, "judgeModel": "m"} for v in ("NaN", True)]
    while (claimed := await store.claim_job("w", 30)) is not None:
        judged = {"state": "SCORE_STATE_SCORED", "rewards": {"reward": 1}, "judgments": odd}
        done = completion.Completion(vocabulary.COMPLETED, score=judged)
        await store.complete_job(claimed.job.id, claimed.job.lease_token, done)
    report = await store.run_report(run.id)
    assert [(j.judged, j.failed) for j in report.datasets[0].rows[0].judges] == [(0, 3)]
    result = await store.compare("judged/a", "judged/b")
    assert result.criteria == []
