"""HEMRA's record types as the services pass them: plain frozen dataclasses, one per record
(a run's, a cell's, a trial's, an attempt's, a leased job's, a score's, a harness's, a tree
entry's), read once from their stored form (a row, or a message's JSON) so no service reads a
stored key by name again.

A stored JSON record keeps hemra.v1's JSON names (`scorerFingerprint`); `of()` (or, for the blobs
a record names, the *_blobs functions) is the one place each is read, and reads never trust a
row: anything malformed reads as empty (blob digests are kept as stored: an export's check
refuses one that is not a string).
"""

from dataclasses import dataclass, field, fields


class FromRow:
    """A record whose fields are its row's columns of the same names."""

    @classmethod
    def of(cls, row):
        """From a row with these columns (anything with those attributes)."""
        return cls(**{f.name: getattr(row, f.name) for f in fields(cls)})


@dataclass(frozen=True)
class RunInfo:
    """A run's columns that never change after it is recorded (so not cancel_requested or leased)."""

    id: str
    spec: dict
    concurrency: int
    max_infra_retries: int
    limited: bool


@dataclass(frozen=True)
class CellInfo(FromRow):
    """A run's cell: one harness on one dataset."""

    id: str
    run_id: str
    position: int
    dataset_digest: str
    dataset_name: str
    harness_digest: str
    harness_name: str
    model: str


@dataclass(frozen=True)
class TrialInfo(FromRow):
    """One repetition of one task in a cell."""

    id: str
    run_id: str
    cell_id: str
    task_digest: str
    task_name: str
    repetition: int


@dataclass(frozen=True)
class Record:
    """A pinned task or harness: its digest and its message as JSON."""

    digest: str
    record: dict


@dataclass(frozen=True)
class LeasedJob:
    """A job as its lease holder knows it: every later call about it names its lease token."""

    id: str
    run_id: str
    attempt_id: str
    lease_token: int
    lease_expire_time: float

    @classmethod
    def of(cls, row) -> "LeasedJob":
        """From a jobs row (anything with those attributes)."""
        return cls(row.id, row.run_id, row.attempt_id, row.lease_token, row.lease_expire_time)


@dataclass(frozen=True)
class AttemptInfo(FromRow):
    """An attempt as stored: every column of its row (tables.Attempt says what each holds)."""

    id: str
    run_id: str
    trial_id: str
    number: int
    state: str
    outcome: str | None
    exit_code: int
    error: str
    create_time: float
    start_time: float | None
    end_time: float | None
    agent_version: str
    agent_name: str
    score: dict | None
    judge_scores: list | None
    artifacts: list
    event_count: int
    input_tokens: int
    output_tokens: int
    cost_usd: float
    usage_events: int
    usage_observed_input_tokens: int
    usage_observed_output_tokens: int
    usage_observed_cache_read_input_tokens: int
    usage_observed_cache_creation_input_tokens: int
    usage_observed_model_calls: int
    usage_observed_unreadable: int
    usage_observed_events: int
    mining_events: int
    verdict: str | None
    released: bool


@dataclass(frozen=True)
class AttemptRead:
    """An attempt with its trial and cell, as the store's reads of attempts return it."""

    attempt: AttemptInfo
    trial: TrialInfo
    cell: CellInfo


def _text(data: dict, key: str) -> str:
    value = data.get(key, "")
    return value if isinstance(value, str) else ""


def _dicts(value) -> tuple[dict, ...]:
    return tuple(v for v in value if isinstance(v, dict)) if isinstance(value, list) else ()


@dataclass(frozen=True)
class Score:
    """A score (hemra.v1.Score) as stored, its fields read once. `rewards` is as recorded: the
    reward rule (services/domain/rewards.py) decides what of it is usable."""

    state: str = ""
    rewards: object = field(default_factory=dict)
    scorer_fingerprint: str = ""
    judge_model: str = ""
    judge: str = ""
    error: str = ""
    stdout_blob_digest: str = ""
    judgments: tuple[dict, ...] = ()
    judge_calls: tuple[dict, ...] = ()

    @classmethod
    def of(cls, data) -> "Score":
        """From a score's JSON form (a dict; anything else reads as no score)."""
        if not isinstance(data, dict):
            return cls()
        return cls(
            state=_text(data, "state"),
            rewards=data.get("rewards", {}),
            scorer_fingerprint=_text(data, "scorerFingerprint"),
            judge_model=_text(data, "judgeModel"),
            judge=_text(data, "judge"),
            error=_text(data, "error"),
            stdout_blob_digest=_text(data, "stdoutBlobDigest"),
            judgments=_dicts(data.get("judgments")),
            judge_calls=_dicts(data.get("judgeCalls")),
        )

    @property
    def judge_models(self) -> list[str]:
        """The served models the score names (its judge model, comma-separated)."""
        return [m.strip() for m in self.judge_model.split(",") if m.strip()]


@dataclass(frozen=True)
class TreeEntry:
    """One entry of a folder's listing (hemra.v1.TreeEntry): a folder, or a file by its blob."""

    path: str
    is_dir: bool = False
    executable: bool = False
    blob_digest: str = ""
    size_bytes: int = 0

    @classmethod
    def of(cls, row: dict) -> "TreeEntry":
        """From the JSON form a listing or an export keeps (int64 sizes are strings there)."""
        return cls(
            path=row["path"],
            is_dir=bool(row.get("isDir")),
            executable=bool(row.get("executable")),
            blob_digest=row.get("blobDigest", ""),
            size_bytes=_size(row.get("sizeBytes", 0)),
        )


def _size(value) -> int:
    try:
        return int(value or 0)
    except (TypeError, ValueError):
        return 0


@dataclass(frozen=True)
class HarnessFacts:
    """What the store reads of a pinned harness (hemra.v1.Harness as JSON): its kind, the agent
    and agent version it pins, its model and the environment variables it passes."""

    kind: str = ""
    agent: str = ""
    agent_version: str = ""
    model: str = ""
    env: tuple = ()

    @classmethod
    def of(cls, record) -> "HarnessFacts":
        """From a harness record (a dict; anything else reads as nothing pinned)."""
        if not isinstance(record, dict):
            return cls()
        return cls(
            kind=record.get("kind", ""),
            agent=record.get("agent", ""),
            agent_version=record.get("agentVersion", ""),
            model=record.get("model", ""),
            env=tuple(record.get("env", [])),
        )


@dataclass(frozen=True)
class TaskIdentity:
    """What pairing (services/store/compare.py) asks of a task seen on one side only: Harbor's
    content digest of its folder, and whether HEMRA holds its files (an import that could not
    pin the folder does not)."""

    harbor_digest: str
    has_files: bool

    @classmethod
    def of(cls, record) -> "TaskIdentity":
        """From a task record (hemra.v1.Task as JSON); anything else reads as neither."""
        record = record or {}
        return cls(str(record.get("harborDigest") or ""), bool(record.get("files")))


def history_kept(spec) -> frozenset[str]:
    """The task names a run spec (hemra.v1.RunSpec as JSON) kept with their history."""
    return frozenset((spec if isinstance(spec, dict) else {}).get("historyKept") or ())


def task_blobs(record: dict) -> list:
    """The blob digests a task record names (its files), as stored: a crafted record may name
    something that is not a string, which the caller refuses."""
    return [f.get("blobDigest", "") for f in record.get("files", [])]


def attempt_blobs(artifacts, score, judge_scores) -> list:
    """The blob digests an attempt's stored columns name, as stored: its artifacts, its verifier
    output, and each judge call's request and response."""
    found = [a.get("blobDigest", "") for a in artifacts or []]
    found.append((score or {}).get("stdoutBlobDigest", ""))
    for judged in judge_scores or []:
        for call in judged.get("judgeCalls", []) if isinstance(judged, dict) else []:
            found += [call.get("requestBlobDigest", ""), call.get("responseBlobDigest", "")]
    return found


def tree_blobs(tree) -> list:
    """The blob digests an import's tree (hemra.v1.TreeEntry as JSON) names, as stored."""
    return [e.get("blobDigest", "") for e in tree or []]
