"""A task's own rubric judges, end to end: a verifier that writes rewardkit's
reward-details.json beside its rewards gets every criterion recorded with the attempt, by
`hemra run` (host sandbox) and by `hemra import` of a Harbor job whose trial kept the file."""

import json

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
    # --json gives every field, zero or empty ones too
    assert found[("correctness", "handles_empty_input")] == {
        "judge": "correctness",
        "source": "task",
        "criterion": "handles_empty_input",
        "description": "An empty file counts 0 words",
        "raw_json": "false",
        "weight": 2.0,
        "expected": "0",
        "observed": "1",
        "passed": False,
        "value": 0.0,
        "agreement": 0.0,
        "reason": "",
        "error": "",
        "judge_model": "",
        "sample_raw_json": [],
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


GRADED_VERIFIER = """#!/bin/bash
mkdir -p /logs/verifier
if /usr/bin/python3 /tests/check.py; then value=1.0; reward=1; else value=0.0; reward=0; fi
echo "{\\"reward\\": $reward}" > /logs/verifier/reward.json
cat > /logs/verifier/reward-details.json <<JSON
{"quality": {"kind": "llm", "judge": {"model": "judge-x"},
             "criteria": [{"name": "works", "value": $value}, {"name": "style", "value": 0.5}]}}
JSON
"""


def test_compare_criteria__two_harnesses_judged_by_one_rubric(hemra_env, tmp_path):
    task = copy_task("text-stats", tmp_path / "graded", "graded-stats")
    (task / "tests" / "test.sh").write_text(GRADED_VERIFIER)
    result = hemra(hemra_env, "run", "-H", "oracle", "-H", "nop", "-d", str(tmp_path / "graded"), "--label", "g")
    assert result.returncode == 0, result.stderr
    # The report: each judge per cell (oracle met every criterion but style; nop none).
    assert "rubric judges" in result.stdout and "quality (task)" in result.stdout, result.stdout
    report = json.loads(hemra(hemra_env, "compare", "g", "--json").stdout)
    judges = {row["harness_name"]: row["judges"] for row in report["datasets"][0]["rows"]}
    assert [(j["judge"], j["judged"], j["mean"], j.get("passed", 0)) for j in judges["oracle"]] == [
        ("quality", 1, 0.75, 0)
    ]
    assert [(j["judge"], j["mean"]) for j in judges["nop"]] == [("quality", 0.25)]
    text = hemra(hemra_env, "compare", "g/oracle", "g/nop", "--criteria")
    assert text.returncode == 0, text.stderr
    assert "quality / works" in text.stdout and "-1.000" in text.stdout, text.stdout
    assert "quality / style" in text.stdout
    plain = hemra(hemra_env, "compare", "g/oracle", "g/nop").stdout
    assert "2 rubric criteria were judged on both sides: --criteria lists them" in plain
    data = json.loads(hemra(hemra_env, "compare", "g/oracle", "g/nop", "--json").stdout)
    works = next(c for c in data["criteria"] if c["criterion"] == "works")
    assert (works["a_mean"], works["b_mean"], works["judge_model"], works["tasks"]) == (1.0, 0.0, "judge-x", 1)
