"""A task's own rubric judges, end to end: a verifier that writes rewardkit's
reward-details.json beside its rewards gets every criterion recorded with the attempt, by
`hemra run` (host sandbox) and by `hemra import` of a Harbor job whose trial kept the file."""

from tests.e2e.helpers import copy_task, hemra, show
from tests.importer.test_imports import unpack
from tests.scorer.test_rubric import DETAILS

VERIFIER = """#!/bin/bash
mkdir -p /logs/verifier
echo '{"correctness": 0.75, "quality": 0.625}' > /logs/verifier/reward.json
cp /tests/reward-details.json /logs/verifier/reward-details.json
"""


def criteria(attempt: dict) -> dict[tuple[str, str], dict]:
    return {(j.get("judge", ""), j.get("criterion", "")): j for j in attempt["score"].get("judgments", [])}


def test_run__every_criterion_recorded_beside_the_rewards(hemra_env, tmp_path):
    task = copy_task("text-stats", tmp_path / "rubric", "rubric-stats")
    (task / "tests" / "test.sh").write_text(VERIFIER)
    (task / "tests" / "reward-details.json").write_bytes(DETAILS)
    result = hemra(hemra_env, "run", "-H", "oracle", "-d", str(tmp_path / "rubric"), "--label", "rubric")
    assert result.returncode == 0, result.stderr
    [attempt] = show(hemra_env, "rubric")["attempts"]
    assert attempt["score"]["rewards"] == {"correctness": 0.75, "quality": 0.625}
    found = criteria(attempt)
    assert len(found) == 6
    assert found[("correctness", "handles_empty_input")] == {
        "judge": "correctness",
        "source": "task",
        "criterion": "handles_empty_input",
        "description": "An empty file counts 0 words",
        "raw_json": "false",
        "weight": 2.0,
        "expected": "0",
        "observed": "1",
    }
    assert found[("quality", "readability")]["judge_model"] == "anthropic/claude-sonnet-4-6"
    assert found[("quality", "docstrings")]["error"] == "the judge's answer was not JSON after 3 tries"
    # It is the attempt's record: the same through the attempt itself.
    assert criteria(show(hemra_env, attempt["id"])["attempt"]) == found


def test_import__a_harbor_trials_reward_details_are_recorded(hemra_env, tmp_path):
    job = unpack("harbor-0.25-oracle.tar", tmp_path)
    [trial] = [p for p in job.iterdir() if p.name.startswith("json-transform__")]
    (trial / "verifier" / "reward-details.json").write_bytes(DETAILS)
    result = hemra(hemra_env, "import", str(job), "--label", "judged")
    assert result.returncode == 0, result.stderr
    attempts = show(hemra_env, "judged")["attempts"]
    judged = [a for a in attempts if a["score"].get("judgments")]
    assert len(judged) == 1 and len(criteria(judged[0])) == 6
    assert criteria(judged[0])[("quality", "error_handling")]["reason"] == "Ignores a missing file."
