"""Read a Harbor job directory (0.13-era and 0.25-era shapes, and what lies between).

Official rewards are copied as they are (result.json verifier_result.rewards),
never recomputed from verifier/reward.*. Trial exceptions are classified:
an agent timeout or a non-zero agent exit is a result; environment, build and
setup failures are infrastructure; verifier failures are scorer failures.
"""

import datetime as dt
from pathlib import Path

import msgspec

from hemra.services.common import mining, parsing, rubric
from hemra.services.domain.imported import (
    CANCELLED,
    COMPLETED,
    HARNESS_FAILED,
    INFRA_FAILED,
    TIMED_OUT,
    ImportedResults,
    ImportedTrial,
)
from hemra.services.domain.importerrors import ImportProblem
from hemra.services.domain.rewards import reward_problem
from hemra.services.domain.tree import Entry

#: exception_type -> outcome. Verifier failures keep the harness's outcome and fail the score.
RESULT_EXCEPTIONS = {
    "AgentTimeoutError": TIMED_OUT,
    "NonZeroAgentExitCodeError": HARNESS_FAILED,
    "ContextLengthExceededError": HARNESS_FAILED,
    "OutputLengthExceededError": HARNESS_FAILED,
}
SCORER_EXCEPTIONS = {
    "VerifierTimeoutError",
    "RewardFileNotFoundError",
    "RewardFileEmptyError",
    "VerifierOutputParseError",
    "ValidationError",
}
CANCEL_EXCEPTIONS = {"CancelledError"}
#: Everything else (environment start/build, setup, healthcheck, rate limits, compose errors,
#: unknown types) is an infrastructure failure: counted apart, never a failed task.


def looks_like(root: Path) -> bool:
    """A probe: it looks at names and kinds, opening nothing (read_tree then reads the files,
    refusing links and anything but files and folders by name)."""
    return (
        (root / "config.json").is_file()
        and (root / "result.json").is_file()
        and any((d / "result.json").is_file() or (d / "config.json").is_file() for d in root.iterdir() if d.is_dir())
    )


def read_job(root: Path, entries: list[Entry]) -> ImportedResults:
    """The job in `root`, whose files `entries` holds (read_tree's: every file read once)."""
    job = Job(root, entries)
    result = job.json("result.json")
    if not isinstance(result, dict) or "id" not in result:
        raise ImportProblem(f"{root / 'result.json'}: not a Harbor job result (no id)")
    locks = _lock_digests(job)
    trials = [_trial(job, folder, locks) for folder in job.folders]
    if not trials:
        raise ImportProblem(f"{root}: a Harbor job without trial folders")
    version = "0.25" if any(f"{folder}/lock.json" in job.data for folder in job.folders) else "0.13"
    return ImportedResults("harbor", version, trials)


def read_trial(root: Path, folder: str, entries: list[Entry]) -> ImportedTrial:
    """One trial of a job Harbor is still writing (a supervised run, services/executor/harbor):
    `entries` are read_tree's of root/folder. A result.json Harbor has not finished writing is
    an ImportProblem: the caller reads the folder again."""
    inside = [Entry(folder, True)] + [
        Entry(f"{folder}/{e.path}", e.is_dir, e.executable, e.data, e.digest) for e in entries
    ]
    return _trial(Job(root, inside), folder, {})


class Job:
    """A job directory as read_tree read it: file bytes by relative path, and each top-level
    folder's files in path order."""

    def __init__(self, root: Path, entries: list[Entry]):
        self.root = root
        self.data = {e.path: e.data for e in entries if not e.is_dir}
        self.folders = sorted(e.path for e in entries if e.is_dir and "/" not in e.path)
        self.files: dict[str, list[str]] = {folder: [] for folder in self.folders}
        for path in self.data:
            top, slash, _ = path.partition("/")
            if slash:
                self.files[top].append(path)
        for paths in self.files.values():
            paths.sort(key=lambda p: p.split("/"))  # as sorted Path objects would be

    def json(self, path: str, missing_ok: bool = False):
        data = self.data.get(path)
        if data is None:
            if missing_ok:
                return None
            raise ImportProblem(f"{self.root / path}: missing (the job or trial did not finish?)")
        try:
            return parsing.load_json(data, self.root / path, decode=msgspec.json.decode)
        except parsing.Unbounded as exc:
            raise ImportProblem(str(exc)) from None
        except msgspec.DecodeError as exc:
            raise ImportProblem(f"{self.root / path}: truncated or not JSON ({exc})") from None


def _trial(job: Job, folder: str, locks: dict[str, str]) -> ImportedTrial:
    path = job.root / folder / "result.json"
    result = job.json(f"{folder}/result.json")
    if not isinstance(result, dict) or "trial_name" not in result:
        raise ImportProblem(f"{path}: not a Harbor trial result (no trial_name)")
    agent = _object(result, "agent_info", path)
    model = _text(_object(agent, "model_info", path), "name", path)
    exception = _object(result, "exception_info", path)
    kind = _text(exception, "exception_type", path)
    rewards = _object(result, "verifier_result", path).get("rewards")
    problem = reward_problem(rewards) if rewards is not None else ""
    if problem:
        raise ImportProblem(f"{path}: verifier_result.rewards: {problem}")
    outcome, error, score_error = _classify(kind, _text(exception, "exception_message", path), rewards)
    task_path = _text(_object(_object(result, "config", path), "task", path), "path", path)
    trial_lock = _trial_lock_digest(job, folder)
    task_name = _text(result, "task_name", path)
    return ImportedTrial(
        dataset=_text(result, "source", path) or "adhoc",
        agent=_text(agent, "name", path) or "unknown",
        model=model,
        task_name=task_name or folder.split("__")[0],
        outcome=outcome,
        rewards=rewards if outcome not in (INFRA_FAILED, CANCELLED) else None,
        score_error=score_error,
        error=error,
        agent_version=_text(agent, "version", path),
        task_path=task_path,
        task_pin=trial_lock or locks.get(task_name, "") or ("harbor-checksum:" + _text(result, "task_checksum", path)),
        verifier_pin="harbor-checksum:" + _text(result, "task_checksum", path),
        start_time=_time(result.get("started_at")),
        end_time=_time(result.get("finished_at")),
        files=job.files[folder],
        # The task's rubric judges, read as the scorer reads them from a sandbox.
        judgments=rubric.judgments_of(job.data.get(f"{folder}/verifier/{rubric.DETAILS_FILE}")),
        events=_trajectory(job, folder),
    )


#: Where a Harbor trial keeps its agent's trajectory (ATIF), and the most of it read.
TRAJECTORY = "agent/trajectory.json"
MAX_TRAJECTORY_EVENTS = 50_000


def _trajectory(job: Job, folder: str) -> list[dict]:
    """The trial's trajectory as events (none when it has none, or one HEMRA cannot read: the
    file is kept among the trial's files either way)."""
    data = job.data.get(f"{folder}/{TRAJECTORY}")
    if data is None:
        return []
    try:
        trajectory = parsing.load_json(data, TRAJECTORY, limit=len(data), decode=msgspec.json.decode)
    except (parsing.Unbounded, msgspec.DecodeError):
        return []
    return mining.atif_events(trajectory)[:MAX_TRAJECTORY_EVENTS]


def _object(data: dict, key: str, path: Path) -> dict:
    """data[key] when it is an object, {} when absent or null; anything else is refused by name."""
    value = data.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ImportProblem(f"{path}: {key} must be an object, not {type(value).__name__}")
    return value


def _text(data: dict, key: str, path: Path) -> str:
    """data[key] as text ("" when absent or null; a number as written); anything else is refused."""
    value = data.get(key)
    if value is None:
        return ""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise ImportProblem(f"{path}: {key} must be a string, not {type(value).__name__}")
    return str(value)


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


def _lock_digests(job: Job) -> dict[str, str]:
    """task name -> task content digest from the job's lock.json, when it has one."""
    lock = job.json("lock.json", missing_ok=True)
    if lock is None:
        return {}
    found = {}
    trials = lock.get("trials", []) if isinstance(lock, dict) else []
    for trial in trials if isinstance(trials, list) else []:
        task = trial.get("task") if isinstance(trial, dict) else None
        name, digest = (task.get("name"), task.get("digest")) if isinstance(task, dict) else (None, None)
        if isinstance(name, str) and isinstance(digest, str) and name and digest:
            found[name] = digest
    return found


def _trial_lock_digest(job: Job, folder: str) -> str:
    lock = job.json(f"{folder}/lock.json", missing_ok=True)
    if lock is None:
        return ""
    task = lock.get("task") if isinstance(lock, dict) else None
    digest = task.get("digest") if isinstance(task, dict) else None
    return digest if isinstance(digest, str) else ""


def _time(value) -> float | None:
    if not value:
        return None
    try:
        parsed = dt.datetime.fromisoformat(str(value).replace("Z", "+00:00"))
        if parsed.tzinfo is None:  # naive local time, as Harbor writes some fields
            parsed = parsed.astimezone()
        return parsed.timestamp()
    except (ValueError, OverflowError, OSError):  # not a time, or one no clock can hold
        return None
