"""The one reward -> verdict rule (services/domain/rewards.py) against every reward shape the
product accepts: binary, float, multi-key, missing, and the ones it refuses; and the report's
pass count agrees with it wherever it counts a pass."""

import math

import pytest

from hemra.services.domain import rewards, vocabulary
from hemra.services.store.report import ScoreInfo

SCORED = {"state": "SCORE_STATE_SCORED"}

#: (rewards as recorded, verdict of a completed attempt scored with them)
SHAPES = [
    ({"reward": 1}, "passed"),  # binary
    ({"reward": 0}, "failed"),
    ({"reward": 1.0}, "passed"),  # float
    ({"reward": 0.999}, "failed"),
    ({"reward": 1.5}, "passed"),
    ({"reward": -1.0}, "failed"),
    ({"tests": 1, "lint": 1.0}, "passed"),  # multi-key: every key at least 1
    ({"tests": 1, "lint": 0.5}, "failed"),
    ({"tests": 0, "lint": 0}, "failed"),
    ({}, "failed"),  # scored, yet no reward: nothing passed
    ({"reward": math.nan}, "errored"),  # not recordable: a scorer failure
    ({"reward": math.inf}, "errored"),
    ({"reward": 2e12}, "errored"),
    ({"reward": "1"}, "errored"),
    ({"reward": True}, "errored"),
]


@pytest.mark.parametrize(("found", "expected"), SHAPES)
def test_a_completed_attempt_s_verdict_follows_its_rewards(found, expected):
    assert rewards.verdict(vocabulary.COMPLETED, {**SCORED, "rewards": found}) == expected


def test_missing_rewards_fail_and_a_missing_score_errs():
    assert rewards.verdict(vocabulary.COMPLETED, SCORED) == "failed"  # the key absent
    assert rewards.verdict(vocabulary.COMPLETED, None) == "errored"
    assert rewards.verdict(vocabulary.COMPLETED, {"state": "SCORE_STATE_FAILED", "rewards": {"r": 1}}) == "errored"
    assert rewards.verdict(vocabulary.COMPLETED, {**SCORED, "rewards": [1]}) == "errored"


@pytest.mark.parametrize("outcome", [vocabulary.HARNESS_FAILED, vocabulary.TIMED_OUT])
def test_an_agent_s_failure_is_graded_like_a_completion(outcome):
    assert rewards.verdict(outcome, {**SCORED, "rewards": {"r": 1}}) == "passed"
    assert rewards.verdict(outcome, {**SCORED, "rewards": {"r": 0}}) == "failed"


def test_infra_failures_err_and_cancellations_stay_cancelled_whatever_the_score():
    score = {**SCORED, "rewards": {"r": 1}}
    assert rewards.verdict(vocabulary.INFRA_FAILED, score) == "errored"
    assert rewards.verdict(vocabulary.CANCELLED, score) == "cancelled"
    assert rewards.verdict(vocabulary.CANCELLED, None) == "cancelled"


def test_every_verdict_is_one_of_the_vocabulary():
    outcomes = list(vocabulary.OUTCOMES)
    seen = {rewards.verdict(o, {**SCORED, "rewards": r}) for o in outcomes for r, _ in SHAPES}
    assert seen == set(vocabulary.VERDICTS)


@pytest.mark.parametrize(("found", "expected"), SHAPES)
def test_the_report_counts_a_pass_exactly_where_the_verdict_is_passed(found, expected):
    """The report takes pass rates over binary rewards only; where it counts, it agrees."""
    info = ScoreInfo({**SCORED, "rewards": found})
    if info.is_binary:
        assert info.passed == (expected == "passed")
    else:
        assert info.passed == 0
    assert info.is_scored == (expected != "errored")
