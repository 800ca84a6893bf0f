"""A task's own rubric judges: the per-criterion results its verifier writes beside its rewards.

The format is rewardkit's reward-details.json (Harbor's rubric judges), written next to
reward.json in /logs/verifier (and kept in a Harbor job's trial folder as
verifier/reward-details.json): reward name -> {score, kind, judge: {model, ...}, criteria:
[{name, value, raw, weight, description, reasoning, error}]}, or a list of those when several
rubric files share one reward. `expected` and `observed`, where a criterion has them, are kept.

The file is the task's output, so it is read defensively: bounded in size and count, every
string cut to a length, a criterion that is not usable kept with its error rather than
dropped, and a file that is not this format at all refused as a whole with one reason
(its rewards still stand: the details only explain them).
"""

import json
import math

from hemra.services.common import parsing
from hemra.v1 import common_pb2 as pb

DETAILS_FILE = "reward-details.json"
#: The largest reward-details.json read (it holds the judge's raw output, which can be long).
MAX_DETAILS_BYTES = 4 * 1024 * 1024
#: The most criteria kept from one attempt.
MAX_CRITERIA = 1000
#: Each kept string is cut to this many characters (a reason, an observation, a description).
MAX_TEXT = 4000
SOURCE_TASK = "task"


class RubricError(ValueError):
    """The details file is not rewardkit's format: why, in one line."""


def judgments_of(data: bytes | None) -> list[pb.Judgment]:
    """The criteria of a reward-details.json (none without one); a file that is not one is a
    single judgment saying why (the rewards stand: the details only explain them)."""
    if data is None:
        return []
    try:
        return parse_details(data)
    except RubricError as exc:
        return [pb.Judgment(source=SOURCE_TASK, error=str(exc))]


def parse_details(data: bytes) -> list[pb.Judgment]:
    """Every criterion of every reward in a reward-details.json, in the file's order."""
    if len(data) > MAX_DETAILS_BYTES:
        raise RubricError(f"{DETAILS_FILE} is larger than {MAX_DETAILS_BYTES} bytes")
    try:
        details = parsing.load_json(data, DETAILS_FILE, limit=MAX_DETAILS_BYTES)
    except parsing.Unbounded as exc:  # the details are refused; the rewards they explain stand
        raise RubricError(str(exc)) from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise RubricError(f"{DETAILS_FILE} is not JSON: {exc}") from None
    if not isinstance(details, dict):
        raise RubricError(f"{DETAILS_FILE} must be a JSON object of reward name to its details")
    found: list[pb.Judgment] = []
    for reward, entries in details.items():
        for entry in entries if isinstance(entries, list) else [entries]:
            if not isinstance(entry, dict) or not isinstance(entry.get("criteria", []), list):
                raise RubricError(f"{DETAILS_FILE}: {_cut(reward, 80)!r} is not a reward's details")
            model = _judge_model(entry)
            for criterion in entry.get("criteria", []):
                if len(found) == MAX_CRITERIA:
                    raise RubricError(f"{DETAILS_FILE} holds more than {MAX_CRITERIA} criteria")
                found.append(_judgment(str(reward), criterion, model))
    return found


def _judge_model(entry: dict) -> str:
    judge = entry.get("judge")
    if entry.get("kind") == "programmatic" or not isinstance(judge, dict):
        return ""
    model = judge.get("model") or judge.get("judge") or ""
    return _cut(model, 300) if isinstance(model, str) else ""


def _judgment(reward: str, criterion, model: str) -> pb.Judgment:
    judgment = pb.Judgment(judge=_cut(reward, 300), source=SOURCE_TASK, judge_model=model)
    if not isinstance(criterion, dict):
        judgment.error = "not a criterion (a JSON object)"
        return judgment
    judgment.criterion = _text(criterion, "name", 300) or _text(criterion, "id", 300)
    judgment.description = _text(criterion, "description")
    judgment.reason = _text(criterion, "reasoning") or _text(criterion, "reason")
    judgment.expected = _text(criterion, "expected")
    judgment.observed = _text(criterion, "observed")
    if "raw" in criterion:
        judgment.raw_json = _cut(json.dumps(criterion["raw"]), MAX_TEXT)
    weight = criterion.get("weight", 1.0)
    judgment.weight = float(weight) if _finite(weight) else 1.0
    value, error = criterion.get("value"), _text(criterion, "error")
    if not judgment.criterion:
        judgment.error = "the criterion has no name"
    elif error:
        judgment.error = error
    elif not _finite(value):
        judgment.error = f"value {_cut(json.dumps(value), 40)} is not a finite number"
    else:
        judgment.value = float(value)
        judgment.passed = judgment.value >= 1.0
    return judgment


def _finite(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _text(data: dict, key: str, limit: int = MAX_TEXT) -> str:
    value = data.get(key)
    return _cut(value, limit) if isinstance(value, str) else ""


def _cut(text: str, limit: int) -> str:
    text = text.replace("\0", "\ufffd")
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"
