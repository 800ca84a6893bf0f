"""A task's own rubric judges (services/common/rubric.py): rewardkit's reward-details.json read
criterion by criterion, defensively, and kept beside the rewards by the verifier."""

import json

import pytest

from hemra.services.common import rubric
from tests.conftest import REPO
from tests.scorer.test_verifier import verdict_of

DETAILS = (REPO / "tests" / "fixtures" / "rubric" / "reward-details.json").read_bytes()


def test_parse__every_criterion_of_every_reward_with_its_judge():
    found = rubric.parse_details(DETAILS)
    assert [(j.judge, j.criterion) for j in found] == [
        ("correctness", "counts_words"),
        ("correctness", "counts_lines"),
        ("correctness", "handles_empty_input"),
        ("quality", "readability"),
        ("quality", "error_handling"),
        ("quality", "docstrings"),
    ]
    empty = found[2]
    assert (empty.value, empty.passed, empty.weight, empty.expected, empty.observed) == (0.0, False, 2.0, "0", "1")
    assert empty.judge_model == "" and empty.source == "task"  # programmatic: no model judged it
    readability = found[3]
    assert readability.judge_model == "anthropic/claude-sonnet-4-6"
    assert (readability.value, readability.raw_json, readability.passed) == (0.75, "4", False)
    assert readability.reason == "Clear names, one long function."
    assert found[0].passed and found[0].value == 1.0
    # A criterion its judge failed on is kept, with why: never a 0.
    assert found[5].error == "the judge's answer was not JSON after 3 tries" and not found[5].passed


@pytest.mark.parametrize(
    "data, message",
    [
        (b"", "is not JSON"),
        (b"[1, 2]", "must be a JSON object"),
        (b'{"quality": 3}', "'quality' is not a reward's details"),
        (b'{"quality": {"criteria": "all good"}}', "'quality' is not a reward's details"),
        (b"x" * (rubric.MAX_DETAILS_BYTES + 1), "is larger than"),
    ],
)
def test_parse__a_file_of_another_shape_is_refused_with_why(data, message):
    with pytest.raises(rubric.RubricError, match=message):
        rubric.parse_details(data)


def test_parse__hostile_criteria_are_kept_bounded_with_their_errors():
    criteria = [
        {"name": "n" * 1000, "value": 1, "reasoning": "r" * 100_000},
        {"value": 1},
        {"name": "nan", "value": float("nan")},
        {"name": "flag", "value": True},
        "not an object",
    ]
    found = rubric.parse_details(json.dumps({"r": {"criteria": criteria}}).encode())
    assert len(found[0].criterion) == 300 and len(found[0].reason) == rubric.MAX_TEXT
    assert [j.error for j in found[1:]] == [
        "the criterion has no name",
        "value NaN is not a finite number",
        "value true is not a finite number",
        "not a criterion (a JSON object)",
    ]
    too_many = {"r": {"criteria": [{"name": f"c{i}", "value": 1} for i in range(rubric.MAX_CRITERIA + 1)]}}
    with pytest.raises(rubric.RubricError, match="more than 1000 criteria"):
        rubric.parse_details(json.dumps(too_many).encode())


async def test_verifier__keeps_the_rubric_beside_the_rewards():
    verdict = await verdict_of(
        {
            "/logs/verifier/reward.json": b'{"correctness": 0.75, "quality": 0.625}',
            "/logs/verifier/reward-details.json": DETAILS,
        }
    )
    assert verdict.scored and verdict.rewards == {"correctness": 0.75, "quality": 0.625}
    assert len(verdict.judgments) == 6


async def test_verifier__a_broken_details_file_leaves_the_rewards_standing():
    verdict = await verdict_of({"/logs/verifier/reward.txt": b"1", "/logs/verifier/reward-details.json": b"{oops"})
    assert verdict.scored and verdict.rewards == {"reward": 1.0}
    [judgment] = verdict.judgments
    assert judgment.error.startswith("reward-details.json is not JSON")
