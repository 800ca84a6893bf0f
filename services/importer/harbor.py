"""Read a Harbor job directory (0.13-era and 0.25-era shapes, and what lies between).

Official rewards are copied as they are (result.json verifier_result.rewards),
never recomputed from verifier/reward.*. Trial exceptions are classified:
an agent timeout or a non-zero agent exit is a result; environment, build and
setup failures are infrastructure; verifier failures are scorer failures.
"""

import datetime as dt
import json
from pathlib import Path

from services.importer.errors import ImportProblem
from services.importer.results import (CANCELLED, COMPLETED, HARNESS_FAILED, INFRA_FAILED, TIMED_OUT,
                                       ImportedResults, ImportedTrial)

#: exception_type -> outcome. Verifier failures keep the harness's outcome and fail the score.
RESULT_EXCEPTIONS = {"AgentTimeoutError": TIMED_OUT, "NonZeroAgentExitCodeError": HARNESS_FAILED,
                     "ContextLengthExceededError": HARNESS_FAILED, "OutputLengthExceededError": HARNESS_FAILED}
SCORER_EXCEPTIONS = {"VerifierTimeoutError", "RewardFileNotFoundError", "RewardFileEmptyError",
                     "VerifierOutputParseError", "ValidationError"}
CANCEL_EXCEPTIONS = {"CancelledError"}
#: Everything else (environment start/build, setup, healthcheck, rate limits, compose errors,
#: unknown types) is an infrastructure failure: counted apart, never a failed task.


def looks_like(root: Path) -> bool:
    return (root / "config.json").is_file() and (root / "result.json").is_file() and any(
        (d / "result.json").is_file() or (d / "config.json").is_file() for d in root.iterdir() if d.is_dir())


def read_job(root: Path) -> ImportedResults:
    job = _json(root / "result.json")
    if not isinstance(job, dict) or "id" not in job:
        raise ImportProblem(f"{root / 'result.json'}: not a Harbor job result (no id)")
    locks = _lock_digests(root)
    trials = [_trial(root, d, locks) for d in sorted(root.iterdir()) if d.is_dir()]
    if not trials:
        raise ImportProblem(f"{root}: a Harbor job without trial folders")
    version = "0.25" if any((d / "lock.json").is_file() for d in root.iterdir() if d.is_dir()) else "0.13"
    return ImportedResults("harbor", version, trials)


def _trial(root: Path, folder: Path, locks: dict[str, str]) -> ImportedTrial:
    result = _json(folder / "result.json")
    if not isinstance(result, dict) or "trial_name" not in result:
        raise ImportProblem(f"{folder / 'result.json'}: not a Harbor trial result (no trial_name)")
    agent = result.get("agent_info") or {}
    model = (agent.get("model_info") or {}).get("name") or ""
    exception = result.get("exception_info") or {}
    kind = exception.get("exception_type", "")
    rewards = (result.get("verifier_result") or {}).get("rewards")
    outcome, error, score_error = _classify(kind, exception.get("exception_message", ""), rewards)
    config = result.get("config") or {}
    task_path = ((config.get("task") or {}).get("path")) or ""
    trial_lock = _trial_lock_digest(folder)
    return ImportedTrial(
        dataset=result.get("source") or "adhoc", agent=agent.get("name") or "unknown", model=model,
        task_name=result.get("task_name") or folder.name.split("__")[0], outcome=outcome,
        rewards=rewards if outcome not in (INFRA_FAILED, CANCELLED) else None, score_error=score_error,
        error=error, agent_version=str(agent.get("version") or ""), task_path=task_path,
        task_pin=trial_lock or locks.get(result.get("task_name", ""), "") or
        ("harbor-checksum:" + str(result.get("task_checksum", ""))),
        verifier_pin="harbor-checksum:" + str(result.get("task_checksum", "")),
        start_time=_time(result.get("started_at")), end_time=_time(result.get("finished_at")),
        files=[p.relative_to(root).as_posix() for p in sorted(folder.rglob("*")) if p.is_file()])


def _classify(kind: str, message: str, rewards) -> tuple[str, str, str]:
    """(outcome, error, scorer error)."""
    error = f"{kind}: {message}".strip(": ") if kind else ""
    if kind in CANCEL_EXCEPTIONS:
        return CANCELLED, error, ""
    if kind in RESULT_EXCEPTIONS:
        return RESULT_EXCEPTIONS[kind], error, "" if rewards is not None else "the verifier left no reward"
    if kind in SCORER_EXCEPTIONS:
        return COMPLETED, "", error
    if kind:
        return INFRA_FAILED, error, ""
    return COMPLETED, "", "" if rewards is not None else "no verifier result"


def _lock_digests(root: Path) -> dict[str, str]:
    """task name -> task content digest from the job's lock.json, when it has one."""
    path = root / "lock.json"
    if not path.is_file():
        return {}
    lock = _json(path)
    found = {}
    for trial in lock.get("trials", []) if isinstance(lock, dict) else []:
        task = trial.get("task") or {}
        name, digest = task.get("name"), task.get("digest")
        if name and digest:
            found[name] = digest
    return found


def _trial_lock_digest(folder: Path) -> str:
    path = folder / "lock.json"
    if not path.is_file():
        return ""
    lock = _json(path)
    return ((lock.get("task") or {}).get("digest") or "") if isinstance(lock, dict) else ""


def _json(path: Path):
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ImportProblem(f"{path}: missing (the job or trial did not finish?)") from None
    try:
        return json.loads(text)
    except ValueError as exc:
        raise ImportProblem(f"{path}: truncated or not JSON ({exc})") from None


def _time(value) -> float | None:
    if not value:
        return None
    try:
        parsed = dt.datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return None
    if parsed.tzinfo is None:  # naive local time, as Harbor writes some fields
        parsed = parsed.astimezone()
    return parsed.timestamp()
