"""The one reward -> verdict rule of HEMRA: which rewards may be recorded, when they pass, and
the verdict of a finished attempt. The store decides verdicts with it, the report counts
passes with it, the scorer and the importers refuse rewards with it.

A reward set is a map of names to finite numbers. It passes when it has at least one reward and
every reward is at least 1: a binary reward of 1, a float reward of 1.0 or more, a multi-key set
whose every key is at least 1. An empty set, or a set missing (a score with no rewards), fails.
"""

from hemra.services.domain.vocabulary import CANCELLED, INFRA_FAILED, Verdict

#: The largest reward magnitude HEMRA records: a reward is a finite number within
#: [-MAX_ABS_REWARD, MAX_ABS_REWARD]. Anything else (1e308, Infinity, NaN, a string) is a
#: scorer failure when scored and a bad import when imported; reports and compares read a
#: stored one (recorded before this rule) as a scorer failure. Sums of a million such
#: rewards stay exact enough and far from overflow.
MAX_ABS_REWARD = 1e12
#: A score's state once its scorer graded it (hemra.v1.ScoreState, as stored in JSON).
SCORED = "SCORE_STATE_SCORED"


def reward_problem(rewards) -> str:
    """Why these rewards (name -> value) cannot be recorded, or "" when they can."""
    if not isinstance(rewards, dict):
        return "rewards are not a map of names to numbers"
    for name, value in rewards.items():
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            return f"reward {str(name)[:100]!r} is {type(value).__name__}, not a number"
        if not -MAX_ABS_REWARD <= value <= MAX_ABS_REWARD:  # NaN fails this too
            return (
                f"reward {str(name)[:100]!r} is {value!r}, outside the range a reward may have "
                f"(a finite number within ±{MAX_ABS_REWARD:g})"
            )
    return ""


def usable_rewards(rewards) -> dict[str, float] | None:
    """A stored score's rewards as floats, or None when any of them breaks the rule above."""
    if reward_problem(rewards):
        return None
    return {name: float(value) for name, value in rewards.items()}


def passes(rewards: dict[str, float]) -> bool:
    """Usable rewards pass: at least one, and every one at least 1."""
    return bool(rewards) and all(v >= 1 for v in rewards.values())


def is_binary(rewards: dict[str, float]) -> bool:
    """One reward, 0 or 1: the shape a pass rate is taken over."""
    values = list(rewards.values())
    return len(values) == 1 and values[0] in (0, 1)


def verdict(outcome: str, score: dict | None) -> str:
    """passed, failed, errored (infra or scorer failure) or cancelled, for a finished attempt with
    this outcome (its short name) and score (hemra.v1.Score as JSON): the one place a verdict is
    decided (the API sends it; clients never decide it again)."""
    if outcome == CANCELLED:
        return Verdict.CANCELLED.value
    score = score or {}
    if outcome == INFRA_FAILED or score.get("state") != SCORED:
        return Verdict.ERRORED.value
    rewards = usable_rewards(score.get("rewards", {}))
    if rewards is None:
        return Verdict.ERRORED.value
    return (Verdict.PASSED if passes(rewards) else Verdict.FAILED).value
