"""Property tests: pairing never mixes scorer fingerprints, reward names or judge models."""

from collections import defaultdict
from types import SimpleNamespace

from hypothesis import given, settings
from hypothesis import strategies as st

from hemra.services.store import compare, report
from hemra.services.store.report import TrialResult

TASKS = [f"sha256:task{i}" for i in range(6)]

trial = st.fixed_dictionaries(
    {
        "task": st.sampled_from(TASKS),
        "fingerprint": st.sampled_from(["sha256:f1", "sha256:f2"]),
        "names": st.sampled_from([("reward",), ("reward", "format_ok"), ("accuracy",)]),
        "judge": st.sampled_from(["", "judge-model-a", "judge-model-b"]),
        "value": st.sampled_from([0, 1, 0.5]),
        "outcome": st.sampled_from(["completed", "completed", "completed", "infra_failed", "cancelled", "timed_out"]),
        "scored": st.booleans(),
    }
)


def side(ref: str, trials: list[dict]) -> compare.Side:
    run = SimpleNamespace(id=f"r-{ref}", label=ref, kind="run")
    cell = SimpleNamespace(dataset_name="ds", harness_name=ref, model="m")
    result = compare.Side(ref, run, [cell], defaultdict(list))
    for item in trials:
        score = {
            "state": "SCORE_STATE_SCORED" if item["scored"] else "SCORE_STATE_SCORER_FAILED",
            "rewards": {name: item["value"] for name in item["names"]} if item["scored"] else {},
            "scorerFingerprint": item["fingerprint"],
            "judgeModel": item["judge"],
        }
        result.trials[item["task"]].append(
            TrialResult(item["task"], item["task"].removeprefix("sha256:"), "finished", item["outcome"], score)
        )
    return result


@settings(max_examples=300, deadline=None)
@given(st.lists(trial, min_size=1, max_size=25), st.lists(trial, min_size=1, max_size=25))
def test_pairing__never_mixes_scorers_reward_names_or_judge_models(trials_a, trials_b):
    a, b = side("a", trials_a), side("b", trials_b)
    if not a.trials.keys() & b.trials.keys():
        return
    result = compare.compare(a, b)
    paired = {task.task_digest for task in result.tasks}
    for digest in paired:
        graded = [x for x in a.trials[digest] + b.trials[digest] if x.is_graded]
        assert len({report.scorer_key(x) for x in graded}) == 1
        assert all(x.is_graded for x in graded) and graded
    names = {task.task_name for task in result.tasks}
    flagged = {item.task_name for item in result.not_comparable}
    assert not names & flagged
    every = {trials[0].task_name for trials in list(a.trials.values()) + list(b.trials.values())}
    assert names | flagged == every
    for item in result.not_comparable:
        if "judge models" in item.reason:
            digest = "sha256:" + item.task_name
            judges = {x.score["judgeModel"] for x in a.trials[digest] + b.trials[digest] if x.is_graded}
            assert len(judges) > 1
    binary = [task for task in result.tasks if task.binary]
    assert result.binary_tasks == len(binary)
    for task in binary:
        assert 0 <= task.a_pass_rate <= 1 and 0 <= task.b_pass_rate <= 1


def test_mcnemar__exact_values():
    assert compare.mcnemar_exact(0, 0) == 1.0
    assert abs(compare.mcnemar_exact(0, 5) - 0.0625) < 1e-12
    assert abs(compare.mcnemar_exact(1, 9) - 0.021484375) < 1e-12
    assert compare.mcnemar_exact(3, 3) == 1.0


def test_bootstrap__seeded_and_reproducible():
    import numpy as np

    diffs = np.array([1, 0, 0, -1, 1, 1, 0, 0.5])
    first, second = compare.bootstrap(diffs), compare.bootstrap(diffs)
    assert first == second and first.low <= diffs.mean() <= first.high
    assert compare.bootstrap(np.array([1.0, 1.0])).low == 1.0


def test_pass_at_k__unbiased_estimates():
    result = side(
        "a",
        [
            {
                "task": TASKS[0],
                "fingerprint": "f",
                "names": ("reward",),
                "judge": "",
                "value": v,
                "outcome": "completed",
                "scored": True,
            }
            for v in (1, 0, 0, 1)
        ],
    )
    at, hat = compare.pass_at_k(result)
    assert at[1] == 0.5 and abs(at[2] - (1 - 1 / 6)) < 1e-12
    assert abs(hat[2] - 1 / 6) < 1e-12 and hat[4] == 0
