"""Read a verifier's reward file: reward.json (named numbers; preferred) or reward.txt."""

import json
import math

from hemra.services import digests
from hemra.services.common import parsing


class RewardError(Exception):
    """The reward file is missing, empty or not what Harbor's format allows."""


def parse_reward_json(data: bytes) -> dict[str, float]:
    if not data.strip():
        raise RewardError("reward.json is empty")
    try:
        value = parsing.load_json(data, "reward.json")
    except parsing.Unbounded as exc:
        raise RewardError(str(exc)) from None
    except ValueError as exc:
        raise RewardError(f"reward.json is not JSON: {exc}") from None
    if not isinstance(value, dict) or not value:
        raise RewardError("reward.json must be a non-empty JSON object of name to number")
    rewards = {}
    for name, number in value.items():
        if isinstance(number, bool) or not isinstance(number, (int, float)) or not _is_finite(number):
            raise RewardError(f"reward.json: {name!r} is not a finite number ({json.dumps(number)[:40]})")
        rewards[str(name)] = number
    return rewards


def _is_finite(number: int | float) -> bool:
    try:
        return math.isfinite(number)
    except OverflowError:  # an int too large for a float
        return False


def parse_reward_txt(data: bytes) -> dict[str, float]:
    text = data.decode("utf-8", errors="replace").strip()
    if not text:
        raise RewardError("reward.txt is empty")
    try:
        value = float(text)
    except ValueError:
        raise RewardError(f"reward.txt is not a number: {text[:40]!r}") from None
    if not math.isfinite(value):
        raise RewardError(f"reward.txt is not a finite number: {text[:40]!r}")
    return {"reward": value}


def fingerprint(tests_digest: str, reward_names) -> str:
    """Identifies a scorer: the verifier's files and the reward names it gave."""
    return digests.scorer_fingerprint(tests_digest, reward_names)


def tests_digest(files) -> str:
    """sha256 over tests/ files (path and content digest), as pinned in the task."""
    return digests.tests_digest((f.path, f.blob_digest) for f in files)
