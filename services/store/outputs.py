"""What the store's domain code returns: typed records, one per hemra.v1 message, with that
message's field names. They become protos in one place (convert.message), where a field the
message does not have is an error, not a value silently dropped.

Times are epoch seconds (or None for never); convert.message makes them Timestamps.
msgspec Structs: building tens of thousands (a compare's tasks) costs about a tuple each."""

import msgspec


class _Record(msgspec.Struct, kw_only=True):
    pass


# --- catalog ------------------------------------------------------------------------------
class DatasetSummary(_Record):
    name: str
    digest: str
    dataset_name: str
    source: str
    tasks: int
    runs: int
    imports: int
    harness_names: list[str]
    last_used_time: float | None


class TaskSummary(_Record):
    task_name: str
    digest: str
    attempts: int = 0
    passed: int = 0
    failed: int = 0
    errored: int = 0
    scorer_fingerprints: list[str] = []
    harness_names: list[str] = []
    origin: str = ""


class TaskPage(_Record):
    """ListTasksResponse."""

    dataset_name: str
    dataset_digest: str
    tasks: list[TaskSummary]
    next_page_token: str


class HarnessSummary(_Record):
    name: str
    digest: str
    harness_name: str
    kind: str
    agent: str
    agent_version: str
    model: str
    env: list[str]
    runs: int
    imports: int
    trials: int
    dataset_names: list[str]
    last_used_time: float | None


class ScoredTask(_Record):
    task_name: str
    task_digest: str
    attempts: int = 0


class ScorerSummary(_Record):
    fingerprint: str
    scorer: str
    judge_model: str
    reward_names: list[str] = []
    attempts: int = 0
    tasks: list[ScoredTask] = []
    dataset_names: list[str] = []
    task_count: int = 0


class JudgeSummary(_Record):
    judge: str
    models: list[str]
    attempts: int
    run_ids: list[str]
    failed: int = 0
    fingerprints: list[str] = msgspec.field(default_factory=list)


class AttemptUsage(_Record):
    attempt_id: str
    input_tokens: int
    output_tokens: int
    cost_usd: float
    usage_events: int


class MiningEvent(_Record):
    seq: int
    pattern: str
    command: str
    possible: bool = False


class MinedAttempt(_Record):
    attempt_id: str
    cell_id: str
    harness_name: str
    model: str
    task_name: str
    repetition: int
    latest: bool
    mining_events: int
    patterns: list[str] = []
    events: list[MiningEvent] = []


class HistoryMining(_Record):
    attempts: list[MinedAttempt] = []
    truncated: bool = False


# --- criterion table ----------------------------------------------------------------------
class CriterionSource(_Record):
    harness_name: str
    run_id: str
    run_label: str
    kind: str
    cell_id: str
    model: str
    create_time: float | None
    trials: int
    complete: bool
    other_cells: int = 0


class CriterionCell(_Record):
    samples: int
    value: float
    excluded: int
    best: bool = False


class CriterionRow(_Record):
    criterion: str
    task_digest: str
    unit: str
    lower_is_better: bool
    cells: list[CriterionCell]


class CriterionTable(_Record):
    dataset_name: str
    dataset_digest: str
    source: str
    sources: list[CriterionSource]
    rows: list[CriterionRow]


# --- report -------------------------------------------------------------------------------
class PairedSummary(_Record):
    paired_tasks: int = 0
    passed: float = 0.0
    baseline_passed: float = 0.0
    binary_tasks: int = 0
    numeric_tasks: int = 0
    mean_rewards: dict[str, float] = {}
    baseline_mean_rewards: dict[str, float] = {}
    not_comparable: list[str] = []
    #: Pass rate minus the baseline's on the binary tasks, in percentage points.
    delta_points: float = 0.0


class CellJudge(_Record):
    judge: str
    source: str
    judge_model: str = ""
    judged: int = 0
    mean: float = 0.0
    passed: int = 0
    failed: int = 0


class RetryReason(_Record):
    reason: str
    attempts: int


class ReportRow(_Record):
    harness_name: str
    model: str
    is_baseline: bool
    trials: int = 0
    graded: int = 0
    binary_graded: int = 0
    passed: int = 0
    numeric_graded: int = 0
    mean_rewards: dict[str, float] = {}
    harness_failed: int = 0
    timed_out: int = 0
    #: Graded trials failed because the verifier timed out, crashed or left no usable reward on
    #: what the agent left (the agent's result, counted in graded too; services/domain/blame.py).
    verifier_faults: int = 0
    infra_failed: int = 0
    scorer_failed: int = 0
    cancelled: int = 0
    unfinished: int = 0
    vs_baseline: PairedSummary | None = None
    flags: list[str] = []
    judges: list[CellJudge] = []
    #: Trials whose latest attempt mined the repository's history (services/common/mining.py).
    history_mining: int = 0
    #: Attempts retried as a new attempt of their trial (an infrastructure failure, a hand-back).
    retried: int = 0
    retry_reasons: list[RetryReason] = []

    @property
    def not_finished(self) -> int:
        """Trials that ended without a result to grade, or did not end."""
        return self.unfinished + self.cancelled + self.infra_failed


class TagRow(_Record):
    tag: str
    harness_name: str
    tasks: int = 0
    binary_graded: int = 0
    passed: int = 0


class DatasetReport(_Record):
    dataset_name: str
    dataset_digest: str
    tasks: int
    rows: list[ReportRow]
    tag_rows: list[TagRow] = []


class ImportProvenance(_Record):
    export_digest: str = ""
    imported_by: str = ""
    import_time: float | None = None
    original_id: str = ""
    original_kind: str = ""
    original_label: str = ""


class RunChange(_Record):
    what: str
    pinned: str = ""
    current: str = ""


class RunRepair(_Record):
    """A resume or repair of the run (services/store/repair.py)."""

    kind: str
    requested_by: str
    create_time: float | None
    reasons: list[str] = []
    queued: int = 0
    allowed_changes: list[RunChange] = []


class Report(_Record):
    run_id: str
    label: str
    baseline: str
    datasets: list[DatasetReport]
    complete: bool
    #: The run's kind; an import's format, source and provenance (None for runs).
    kind: str = "run"
    import_format: str = ""
    source: str = ""
    provenance: ImportProvenance | None = None
    max_infra_retries: int = 0
    #: Resumes and repairs, oldest first; trials by how many attempts they took.
    repairs: list[RunRepair] = []
    trials_by_attempts: dict[int, int] = {}
    #: A resume or repair allowed a changed input: not a fair comparison.
    unfair: bool = False


# --- compare ------------------------------------------------------------------------------
class SideSummary(_Record):
    ref: str
    label: str
    run_id: str
    kind: str
    model: str
    trials: int = 0
    graded: int = 0
    infra_failed: int = 0
    scorer_failed: int = 0
    cancelled: int = 0
    unfinished: int = 0
    pass_at_k: dict[int, float] = {}
    pass_hat_k: dict[int, float] = {}
    label_matches: int = 0


class Interval(_Record):
    low: float
    high: float
    level: float
    resamples: int
    seed: int


class McNemar(_Record):
    a_fail_b_pass: int
    a_pass_b_fail: int
    p_value: float


class PairedTask(_Record):
    task_name: str
    task_digest: str
    binary: bool
    a_trials: int
    b_trials: int
    a_pass_rate: float = 0.0
    b_pass_rate: float = 0.0
    a_means: dict[str, float] = {}
    b_means: dict[str, float] = {}


class NotComparable(_Record):
    task_name: str
    reason: str
    #: A task whose definition changed between the sides: its digest on each.
    a_task_digest: str = ""
    b_task_digest: str = ""


class RewardDelta(_Record):
    name: str
    tasks: int
    a_mean: float
    b_mean: float
    delta: float
    interval: Interval


class CriterionDelta(_Record):
    judge: str
    source: str
    criterion: str
    judge_model: str
    tasks: int
    a_mean: float
    b_mean: float
    delta: float
    interval: Interval
    a_pass_rate: float
    b_pass_rate: float


class Comparison(_Record):
    a: SideSummary
    b: SideSummary
    paired_tasks: int = 0
    binary_tasks: int = 0
    a_passed: float = 0.0
    b_passed: float = 0.0
    delta: float = 0.0
    delta_interval: Interval | None = None
    mcnemar: McNemar | None = None
    flipped_to_pass: list[str] = []
    flipped_to_fail: list[str] = []
    reward_deltas: list[RewardDelta] = []
    not_comparable: list[NotComparable] = []
    tasks: list[PairedTask] = []
    flags: list[str] = []
    criteria: list[CriterionDelta] = []
    criteria_not_comparable: list[NotComparable] = []
    #: Full length of each per-task list, by field name (compare.PER_TASK_LISTS).
    list_lengths: dict[str, int] = {}
