import datetime

from google.protobuf import duration_pb2 as _duration_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from hemra.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ExportRunRequest(_message.Message):
    __slots__ = ("run",)
    RUN_FIELD_NUMBER: _ClassVar[int]
    run: str
    def __init__(self, run: _Optional[str] = ...) -> None: ...

class ExportRunResponse(_message.Message):
    __slots__ = ("manifest_json", "blob_digests")
    MANIFEST_JSON_FIELD_NUMBER: _ClassVar[int]
    BLOB_DIGESTS_FIELD_NUMBER: _ClassVar[int]
    manifest_json: str
    blob_digests: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, manifest_json: _Optional[str] = ..., blob_digests: _Optional[_Iterable[str]] = ...) -> None: ...

class AttemptEvents(_message.Message):
    __slots__ = ("attempt_id", "events")
    ATTEMPT_ID_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    attempt_id: str
    events: _containers.RepeatedCompositeFieldContainer[_common_pb2.Event]
    def __init__(self, attempt_id: _Optional[str] = ..., events: _Optional[_Iterable[_Union[_common_pb2.Event, _Mapping]]] = ...) -> None: ...

class RestoreRunRequest(_message.Message):
    __slots__ = ("manifest_json", "events", "label", "imported_by", "source")
    MANIFEST_JSON_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    LABEL_FIELD_NUMBER: _ClassVar[int]
    IMPORTED_BY_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    manifest_json: str
    events: _containers.RepeatedCompositeFieldContainer[AttemptEvents]
    label: str
    imported_by: str
    source: str
    def __init__(self, manifest_json: _Optional[str] = ..., events: _Optional[_Iterable[_Union[AttemptEvents, _Mapping]]] = ..., label: _Optional[str] = ..., imported_by: _Optional[str] = ..., source: _Optional[str] = ...) -> None: ...

class RestoreRunResponse(_message.Message):
    __slots__ = ("run",)
    RUN_FIELD_NUMBER: _ClassVar[int]
    run: _common_pb2.Run
    def __init__(self, run: _Optional[_Union[_common_pb2.Run, _Mapping]] = ...) -> None: ...

class PlannedTrial(_message.Message):
    __slots__ = ("cell_index", "task_digest", "repetition", "result")
    CELL_INDEX_FIELD_NUMBER: _ClassVar[int]
    TASK_DIGEST_FIELD_NUMBER: _ClassVar[int]
    REPETITION_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    cell_index: int
    task_digest: str
    repetition: int
    result: ImportedResult
    def __init__(self, cell_index: _Optional[int] = ..., task_digest: _Optional[str] = ..., repetition: _Optional[int] = ..., result: _Optional[_Union[ImportedResult, _Mapping]] = ...) -> None: ...

class ImportedResult(_message.Message):
    __slots__ = ("outcome", "error", "score", "rewards_json", "agent_version", "start_time", "end_time", "artifacts", "agent_name", "events")
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    REWARDS_JSON_FIELD_NUMBER: _ClassVar[int]
    AGENT_VERSION_FIELD_NUMBER: _ClassVar[int]
    START_TIME_FIELD_NUMBER: _ClassVar[int]
    END_TIME_FIELD_NUMBER: _ClassVar[int]
    ARTIFACTS_FIELD_NUMBER: _ClassVar[int]
    AGENT_NAME_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    outcome: _common_pb2.Outcome
    error: str
    score: _common_pb2.Score
    rewards_json: str
    agent_version: str
    start_time: _timestamp_pb2.Timestamp
    end_time: _timestamp_pb2.Timestamp
    artifacts: _containers.RepeatedCompositeFieldContainer[_common_pb2.Artifact]
    agent_name: str
    events: _containers.RepeatedCompositeFieldContainer[_common_pb2.Event]
    def __init__(self, outcome: _Optional[_Union[_common_pb2.Outcome, str]] = ..., error: _Optional[str] = ..., score: _Optional[_Union[_common_pb2.Score, _Mapping]] = ..., rewards_json: _Optional[str] = ..., agent_version: _Optional[str] = ..., start_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., end_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., artifacts: _Optional[_Iterable[_Union[_common_pb2.Artifact, _Mapping]]] = ..., agent_name: _Optional[str] = ..., events: _Optional[_Iterable[_Union[_common_pb2.Event, _Mapping]]] = ...) -> None: ...

class TreeEntry(_message.Message):
    __slots__ = ("path", "blob_digest", "is_dir", "executable", "size_bytes")
    PATH_FIELD_NUMBER: _ClassVar[int]
    BLOB_DIGEST_FIELD_NUMBER: _ClassVar[int]
    IS_DIR_FIELD_NUMBER: _ClassVar[int]
    EXECUTABLE_FIELD_NUMBER: _ClassVar[int]
    SIZE_BYTES_FIELD_NUMBER: _ClassVar[int]
    path: str
    blob_digest: str
    is_dir: bool
    executable: bool
    size_bytes: int
    def __init__(self, path: _Optional[str] = ..., blob_digest: _Optional[str] = ..., is_dir: _Optional[bool] = ..., executable: _Optional[bool] = ..., size_bytes: _Optional[int] = ...) -> None: ...

class RecordRunRequest(_message.Message):
    __slots__ = ("spec", "datasets", "harnesses", "cells", "trials", "kind", "import_format", "source", "tree_json", "imported_by", "request_id")
    SPEC_FIELD_NUMBER: _ClassVar[int]
    DATASETS_FIELD_NUMBER: _ClassVar[int]
    HARNESSES_FIELD_NUMBER: _ClassVar[int]
    CELLS_FIELD_NUMBER: _ClassVar[int]
    TRIALS_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    IMPORT_FORMAT_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    TREE_JSON_FIELD_NUMBER: _ClassVar[int]
    IMPORTED_BY_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    spec: _common_pb2.RunSpec
    datasets: _containers.RepeatedCompositeFieldContainer[_common_pb2.Dataset]
    harnesses: _containers.RepeatedCompositeFieldContainer[_common_pb2.Harness]
    cells: _containers.RepeatedCompositeFieldContainer[_common_pb2.Cell]
    trials: _containers.RepeatedCompositeFieldContainer[PlannedTrial]
    kind: str
    import_format: str
    source: str
    tree_json: bytes
    imported_by: str
    request_id: str
    def __init__(self, spec: _Optional[_Union[_common_pb2.RunSpec, _Mapping]] = ..., datasets: _Optional[_Iterable[_Union[_common_pb2.Dataset, _Mapping]]] = ..., harnesses: _Optional[_Iterable[_Union[_common_pb2.Harness, _Mapping]]] = ..., cells: _Optional[_Iterable[_Union[_common_pb2.Cell, _Mapping]]] = ..., trials: _Optional[_Iterable[_Union[PlannedTrial, _Mapping]]] = ..., kind: _Optional[str] = ..., import_format: _Optional[str] = ..., source: _Optional[str] = ..., tree_json: _Optional[bytes] = ..., imported_by: _Optional[str] = ..., request_id: _Optional[str] = ...) -> None: ...

class RecordRunResponse(_message.Message):
    __slots__ = ("run",)
    RUN_FIELD_NUMBER: _ClassVar[int]
    run: _common_pb2.Run
    def __init__(self, run: _Optional[_Union[_common_pb2.Run, _Mapping]] = ...) -> None: ...

class GetRunRequest(_message.Message):
    __slots__ = ("run",)
    RUN_FIELD_NUMBER: _ClassVar[int]
    run: str
    def __init__(self, run: _Optional[str] = ...) -> None: ...

class GetRunResponse(_message.Message):
    __slots__ = ("run", "label_matches")
    RUN_FIELD_NUMBER: _ClassVar[int]
    LABEL_MATCHES_FIELD_NUMBER: _ClassVar[int]
    run: _common_pb2.Run
    label_matches: int
    def __init__(self, run: _Optional[_Union[_common_pb2.Run, _Mapping]] = ..., label_matches: _Optional[int] = ...) -> None: ...

class ListRunsRequest(_message.Message):
    __slots__ = ("page_size", "page_token", "kind")
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    page_size: int
    page_token: str
    kind: str
    def __init__(self, page_size: _Optional[int] = ..., page_token: _Optional[str] = ..., kind: _Optional[str] = ...) -> None: ...

class ListRunsResponse(_message.Message):
    __slots__ = ("runs", "next_page_token")
    RUNS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    runs: _containers.RepeatedCompositeFieldContainer[_common_pb2.Run]
    next_page_token: str
    def __init__(self, runs: _Optional[_Iterable[_Union[_common_pb2.Run, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class GetRunReportRequest(_message.Message):
    __slots__ = ("run",)
    RUN_FIELD_NUMBER: _ClassVar[int]
    run: str
    def __init__(self, run: _Optional[str] = ...) -> None: ...

class ReportRow(_message.Message):
    __slots__ = ("harness_name", "model", "is_baseline", "trials", "graded", "binary_graded", "passed", "numeric_graded", "mean_rewards", "harness_failed", "timed_out", "infra_failed", "scorer_failed", "cancelled", "unfinished", "vs_baseline", "flags", "judges", "verifier_faults", "history_mining", "retried", "retry_reasons")
    class MeanRewardsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: float
        def __init__(self, key: _Optional[str] = ..., value: _Optional[float] = ...) -> None: ...
    HARNESS_NAME_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    IS_BASELINE_FIELD_NUMBER: _ClassVar[int]
    TRIALS_FIELD_NUMBER: _ClassVar[int]
    GRADED_FIELD_NUMBER: _ClassVar[int]
    BINARY_GRADED_FIELD_NUMBER: _ClassVar[int]
    PASSED_FIELD_NUMBER: _ClassVar[int]
    NUMERIC_GRADED_FIELD_NUMBER: _ClassVar[int]
    MEAN_REWARDS_FIELD_NUMBER: _ClassVar[int]
    HARNESS_FAILED_FIELD_NUMBER: _ClassVar[int]
    TIMED_OUT_FIELD_NUMBER: _ClassVar[int]
    INFRA_FAILED_FIELD_NUMBER: _ClassVar[int]
    SCORER_FAILED_FIELD_NUMBER: _ClassVar[int]
    CANCELLED_FIELD_NUMBER: _ClassVar[int]
    UNFINISHED_FIELD_NUMBER: _ClassVar[int]
    VS_BASELINE_FIELD_NUMBER: _ClassVar[int]
    FLAGS_FIELD_NUMBER: _ClassVar[int]
    JUDGES_FIELD_NUMBER: _ClassVar[int]
    VERIFIER_FAULTS_FIELD_NUMBER: _ClassVar[int]
    HISTORY_MINING_FIELD_NUMBER: _ClassVar[int]
    RETRIED_FIELD_NUMBER: _ClassVar[int]
    RETRY_REASONS_FIELD_NUMBER: _ClassVar[int]
    harness_name: str
    model: str
    is_baseline: bool
    trials: int
    graded: int
    binary_graded: int
    passed: int
    numeric_graded: int
    mean_rewards: _containers.ScalarMap[str, float]
    harness_failed: int
    timed_out: int
    infra_failed: int
    scorer_failed: int
    cancelled: int
    unfinished: int
    vs_baseline: PairedSummary
    flags: _containers.RepeatedScalarFieldContainer[str]
    judges: _containers.RepeatedCompositeFieldContainer[CellJudge]
    verifier_faults: int
    history_mining: int
    retried: int
    retry_reasons: _containers.RepeatedCompositeFieldContainer[RetryReason]
    def __init__(self, harness_name: _Optional[str] = ..., model: _Optional[str] = ..., is_baseline: _Optional[bool] = ..., trials: _Optional[int] = ..., graded: _Optional[int] = ..., binary_graded: _Optional[int] = ..., passed: _Optional[int] = ..., numeric_graded: _Optional[int] = ..., mean_rewards: _Optional[_Mapping[str, float]] = ..., harness_failed: _Optional[int] = ..., timed_out: _Optional[int] = ..., infra_failed: _Optional[int] = ..., scorer_failed: _Optional[int] = ..., cancelled: _Optional[int] = ..., unfinished: _Optional[int] = ..., vs_baseline: _Optional[_Union[PairedSummary, _Mapping]] = ..., flags: _Optional[_Iterable[str]] = ..., judges: _Optional[_Iterable[_Union[CellJudge, _Mapping]]] = ..., verifier_faults: _Optional[int] = ..., history_mining: _Optional[int] = ..., retried: _Optional[int] = ..., retry_reasons: _Optional[_Iterable[_Union[RetryReason, _Mapping]]] = ...) -> None: ...

class RetryReason(_message.Message):
    __slots__ = ("reason", "attempts")
    REASON_FIELD_NUMBER: _ClassVar[int]
    ATTEMPTS_FIELD_NUMBER: _ClassVar[int]
    reason: str
    attempts: int
    def __init__(self, reason: _Optional[str] = ..., attempts: _Optional[int] = ...) -> None: ...

class CellJudge(_message.Message):
    __slots__ = ("judge", "source", "judge_model", "judged", "mean", "passed", "failed")
    JUDGE_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    JUDGE_MODEL_FIELD_NUMBER: _ClassVar[int]
    JUDGED_FIELD_NUMBER: _ClassVar[int]
    MEAN_FIELD_NUMBER: _ClassVar[int]
    PASSED_FIELD_NUMBER: _ClassVar[int]
    FAILED_FIELD_NUMBER: _ClassVar[int]
    judge: str
    source: str
    judge_model: str
    judged: int
    mean: float
    passed: int
    failed: int
    def __init__(self, judge: _Optional[str] = ..., source: _Optional[str] = ..., judge_model: _Optional[str] = ..., judged: _Optional[int] = ..., mean: _Optional[float] = ..., passed: _Optional[int] = ..., failed: _Optional[int] = ...) -> None: ...

class PairedSummary(_message.Message):
    __slots__ = ("paired_tasks", "passed", "baseline_passed", "binary_tasks", "numeric_tasks", "mean_rewards", "baseline_mean_rewards", "not_comparable", "delta_points")
    class MeanRewardsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: float
        def __init__(self, key: _Optional[str] = ..., value: _Optional[float] = ...) -> None: ...
    class BaselineMeanRewardsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: float
        def __init__(self, key: _Optional[str] = ..., value: _Optional[float] = ...) -> None: ...
    PAIRED_TASKS_FIELD_NUMBER: _ClassVar[int]
    PASSED_FIELD_NUMBER: _ClassVar[int]
    BASELINE_PASSED_FIELD_NUMBER: _ClassVar[int]
    BINARY_TASKS_FIELD_NUMBER: _ClassVar[int]
    NUMERIC_TASKS_FIELD_NUMBER: _ClassVar[int]
    MEAN_REWARDS_FIELD_NUMBER: _ClassVar[int]
    BASELINE_MEAN_REWARDS_FIELD_NUMBER: _ClassVar[int]
    NOT_COMPARABLE_FIELD_NUMBER: _ClassVar[int]
    DELTA_POINTS_FIELD_NUMBER: _ClassVar[int]
    paired_tasks: int
    passed: float
    baseline_passed: float
    binary_tasks: int
    numeric_tasks: int
    mean_rewards: _containers.ScalarMap[str, float]
    baseline_mean_rewards: _containers.ScalarMap[str, float]
    not_comparable: _containers.RepeatedScalarFieldContainer[str]
    delta_points: float
    def __init__(self, paired_tasks: _Optional[int] = ..., passed: _Optional[float] = ..., baseline_passed: _Optional[float] = ..., binary_tasks: _Optional[int] = ..., numeric_tasks: _Optional[int] = ..., mean_rewards: _Optional[_Mapping[str, float]] = ..., baseline_mean_rewards: _Optional[_Mapping[str, float]] = ..., not_comparable: _Optional[_Iterable[str]] = ..., delta_points: _Optional[float] = ...) -> None: ...

class DatasetReport(_message.Message):
    __slots__ = ("dataset_name", "dataset_digest", "tasks", "rows", "tag_rows")
    DATASET_NAME_FIELD_NUMBER: _ClassVar[int]
    DATASET_DIGEST_FIELD_NUMBER: _ClassVar[int]
    TASKS_FIELD_NUMBER: _ClassVar[int]
    ROWS_FIELD_NUMBER: _ClassVar[int]
    TAG_ROWS_FIELD_NUMBER: _ClassVar[int]
    dataset_name: str
    dataset_digest: str
    tasks: int
    rows: _containers.RepeatedCompositeFieldContainer[ReportRow]
    tag_rows: _containers.RepeatedCompositeFieldContainer[TagRow]
    def __init__(self, dataset_name: _Optional[str] = ..., dataset_digest: _Optional[str] = ..., tasks: _Optional[int] = ..., rows: _Optional[_Iterable[_Union[ReportRow, _Mapping]]] = ..., tag_rows: _Optional[_Iterable[_Union[TagRow, _Mapping]]] = ...) -> None: ...

class TagRow(_message.Message):
    __slots__ = ("tag", "harness_name", "tasks", "binary_graded", "passed")
    TAG_FIELD_NUMBER: _ClassVar[int]
    HARNESS_NAME_FIELD_NUMBER: _ClassVar[int]
    TASKS_FIELD_NUMBER: _ClassVar[int]
    BINARY_GRADED_FIELD_NUMBER: _ClassVar[int]
    PASSED_FIELD_NUMBER: _ClassVar[int]
    tag: str
    harness_name: str
    tasks: int
    binary_graded: int
    passed: int
    def __init__(self, tag: _Optional[str] = ..., harness_name: _Optional[str] = ..., tasks: _Optional[int] = ..., binary_graded: _Optional[int] = ..., passed: _Optional[int] = ...) -> None: ...

class Report(_message.Message):
    __slots__ = ("run_id", "label", "baseline", "datasets", "complete", "kind", "import_format", "source", "provenance", "max_infra_retries", "repairs", "trials_by_attempts", "unfair")
    class TrialsByAttemptsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: int
        value: int
        def __init__(self, key: _Optional[int] = ..., value: _Optional[int] = ...) -> None: ...
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    LABEL_FIELD_NUMBER: _ClassVar[int]
    BASELINE_FIELD_NUMBER: _ClassVar[int]
    DATASETS_FIELD_NUMBER: _ClassVar[int]
    COMPLETE_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    IMPORT_FORMAT_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    PROVENANCE_FIELD_NUMBER: _ClassVar[int]
    MAX_INFRA_RETRIES_FIELD_NUMBER: _ClassVar[int]
    REPAIRS_FIELD_NUMBER: _ClassVar[int]
    TRIALS_BY_ATTEMPTS_FIELD_NUMBER: _ClassVar[int]
    UNFAIR_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    label: str
    baseline: str
    datasets: _containers.RepeatedCompositeFieldContainer[DatasetReport]
    complete: bool
    kind: str
    import_format: str
    source: str
    provenance: _common_pb2.ImportProvenance
    max_infra_retries: int
    repairs: _containers.RepeatedCompositeFieldContainer[RunRepair]
    trials_by_attempts: _containers.ScalarMap[int, int]
    unfair: bool
    def __init__(self, run_id: _Optional[str] = ..., label: _Optional[str] = ..., baseline: _Optional[str] = ..., datasets: _Optional[_Iterable[_Union[DatasetReport, _Mapping]]] = ..., complete: _Optional[bool] = ..., kind: _Optional[str] = ..., import_format: _Optional[str] = ..., source: _Optional[str] = ..., provenance: _Optional[_Union[_common_pb2.ImportProvenance, _Mapping]] = ..., max_infra_retries: _Optional[int] = ..., repairs: _Optional[_Iterable[_Union[RunRepair, _Mapping]]] = ..., trials_by_attempts: _Optional[_Mapping[int, int]] = ..., unfair: _Optional[bool] = ...) -> None: ...

class GetRunReportResponse(_message.Message):
    __slots__ = ("report",)
    REPORT_FIELD_NUMBER: _ClassVar[int]
    report: Report
    def __init__(self, report: _Optional[_Union[Report, _Mapping]] = ...) -> None: ...

class CompareSidesRequest(_message.Message):
    __slots__ = ("a", "b", "judge", "list_limit")
    A_FIELD_NUMBER: _ClassVar[int]
    B_FIELD_NUMBER: _ClassVar[int]
    JUDGE_FIELD_NUMBER: _ClassVar[int]
    LIST_LIMIT_FIELD_NUMBER: _ClassVar[int]
    a: str
    b: str
    judge: str
    list_limit: int
    def __init__(self, a: _Optional[str] = ..., b: _Optional[str] = ..., judge: _Optional[str] = ..., list_limit: _Optional[int] = ...) -> None: ...

class SideSummary(_message.Message):
    __slots__ = ("ref", "label", "run_id", "kind", "model", "trials", "graded", "infra_failed", "scorer_failed", "cancelled", "unfinished", "pass_at_k", "pass_hat_k", "label_matches")
    class PassAtKEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: int
        value: float
        def __init__(self, key: _Optional[int] = ..., value: _Optional[float] = ...) -> None: ...
    class PassHatKEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: int
        value: float
        def __init__(self, key: _Optional[int] = ..., value: _Optional[float] = ...) -> None: ...
    REF_FIELD_NUMBER: _ClassVar[int]
    LABEL_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    TRIALS_FIELD_NUMBER: _ClassVar[int]
    GRADED_FIELD_NUMBER: _ClassVar[int]
    INFRA_FAILED_FIELD_NUMBER: _ClassVar[int]
    SCORER_FAILED_FIELD_NUMBER: _ClassVar[int]
    CANCELLED_FIELD_NUMBER: _ClassVar[int]
    UNFINISHED_FIELD_NUMBER: _ClassVar[int]
    PASS_AT_K_FIELD_NUMBER: _ClassVar[int]
    PASS_HAT_K_FIELD_NUMBER: _ClassVar[int]
    LABEL_MATCHES_FIELD_NUMBER: _ClassVar[int]
    ref: str
    label: str
    run_id: str
    kind: str
    model: str
    trials: int
    graded: int
    infra_failed: int
    scorer_failed: int
    cancelled: int
    unfinished: int
    pass_at_k: _containers.ScalarMap[int, float]
    pass_hat_k: _containers.ScalarMap[int, float]
    label_matches: int
    def __init__(self, ref: _Optional[str] = ..., label: _Optional[str] = ..., run_id: _Optional[str] = ..., kind: _Optional[str] = ..., model: _Optional[str] = ..., trials: _Optional[int] = ..., graded: _Optional[int] = ..., infra_failed: _Optional[int] = ..., scorer_failed: _Optional[int] = ..., cancelled: _Optional[int] = ..., unfinished: _Optional[int] = ..., pass_at_k: _Optional[_Mapping[int, float]] = ..., pass_hat_k: _Optional[_Mapping[int, float]] = ..., label_matches: _Optional[int] = ...) -> None: ...

class Interval(_message.Message):
    __slots__ = ("low", "high", "level", "resamples", "seed")
    LOW_FIELD_NUMBER: _ClassVar[int]
    HIGH_FIELD_NUMBER: _ClassVar[int]
    LEVEL_FIELD_NUMBER: _ClassVar[int]
    RESAMPLES_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    low: float
    high: float
    level: float
    resamples: int
    seed: int
    def __init__(self, low: _Optional[float] = ..., high: _Optional[float] = ..., level: _Optional[float] = ..., resamples: _Optional[int] = ..., seed: _Optional[int] = ...) -> None: ...

class McNemar(_message.Message):
    __slots__ = ("a_fail_b_pass", "a_pass_b_fail", "p_value")
    A_FAIL_B_PASS_FIELD_NUMBER: _ClassVar[int]
    A_PASS_B_FAIL_FIELD_NUMBER: _ClassVar[int]
    P_VALUE_FIELD_NUMBER: _ClassVar[int]
    a_fail_b_pass: int
    a_pass_b_fail: int
    p_value: float
    def __init__(self, a_fail_b_pass: _Optional[int] = ..., a_pass_b_fail: _Optional[int] = ..., p_value: _Optional[float] = ...) -> None: ...

class PairedTask(_message.Message):
    __slots__ = ("task_name", "task_digest", "binary", "a_trials", "b_trials", "a_pass_rate", "b_pass_rate", "a_means", "b_means")
    class AMeansEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: float
        def __init__(self, key: _Optional[str] = ..., value: _Optional[float] = ...) -> None: ...
    class BMeansEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: float
        def __init__(self, key: _Optional[str] = ..., value: _Optional[float] = ...) -> None: ...
    TASK_NAME_FIELD_NUMBER: _ClassVar[int]
    TASK_DIGEST_FIELD_NUMBER: _ClassVar[int]
    BINARY_FIELD_NUMBER: _ClassVar[int]
    A_TRIALS_FIELD_NUMBER: _ClassVar[int]
    B_TRIALS_FIELD_NUMBER: _ClassVar[int]
    A_PASS_RATE_FIELD_NUMBER: _ClassVar[int]
    B_PASS_RATE_FIELD_NUMBER: _ClassVar[int]
    A_MEANS_FIELD_NUMBER: _ClassVar[int]
    B_MEANS_FIELD_NUMBER: _ClassVar[int]
    task_name: str
    task_digest: str
    binary: bool
    a_trials: int
    b_trials: int
    a_pass_rate: float
    b_pass_rate: float
    a_means: _containers.ScalarMap[str, float]
    b_means: _containers.ScalarMap[str, float]
    def __init__(self, task_name: _Optional[str] = ..., task_digest: _Optional[str] = ..., binary: _Optional[bool] = ..., a_trials: _Optional[int] = ..., b_trials: _Optional[int] = ..., a_pass_rate: _Optional[float] = ..., b_pass_rate: _Optional[float] = ..., a_means: _Optional[_Mapping[str, float]] = ..., b_means: _Optional[_Mapping[str, float]] = ...) -> None: ...

class NotComparable(_message.Message):
    __slots__ = ("task_name", "reason", "a_task_digest", "b_task_digest")
    TASK_NAME_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    A_TASK_DIGEST_FIELD_NUMBER: _ClassVar[int]
    B_TASK_DIGEST_FIELD_NUMBER: _ClassVar[int]
    task_name: str
    reason: str
    a_task_digest: str
    b_task_digest: str
    def __init__(self, task_name: _Optional[str] = ..., reason: _Optional[str] = ..., a_task_digest: _Optional[str] = ..., b_task_digest: _Optional[str] = ...) -> None: ...

class RewardDelta(_message.Message):
    __slots__ = ("name", "tasks", "a_mean", "b_mean", "delta", "interval")
    NAME_FIELD_NUMBER: _ClassVar[int]
    TASKS_FIELD_NUMBER: _ClassVar[int]
    A_MEAN_FIELD_NUMBER: _ClassVar[int]
    B_MEAN_FIELD_NUMBER: _ClassVar[int]
    DELTA_FIELD_NUMBER: _ClassVar[int]
    INTERVAL_FIELD_NUMBER: _ClassVar[int]
    name: str
    tasks: int
    a_mean: float
    b_mean: float
    delta: float
    interval: Interval
    def __init__(self, name: _Optional[str] = ..., tasks: _Optional[int] = ..., a_mean: _Optional[float] = ..., b_mean: _Optional[float] = ..., delta: _Optional[float] = ..., interval: _Optional[_Union[Interval, _Mapping]] = ...) -> None: ...

class CriterionDelta(_message.Message):
    __slots__ = ("judge", "source", "criterion", "judge_model", "tasks", "a_mean", "b_mean", "delta", "interval", "a_pass_rate", "b_pass_rate")
    JUDGE_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    CRITERION_FIELD_NUMBER: _ClassVar[int]
    JUDGE_MODEL_FIELD_NUMBER: _ClassVar[int]
    TASKS_FIELD_NUMBER: _ClassVar[int]
    A_MEAN_FIELD_NUMBER: _ClassVar[int]
    B_MEAN_FIELD_NUMBER: _ClassVar[int]
    DELTA_FIELD_NUMBER: _ClassVar[int]
    INTERVAL_FIELD_NUMBER: _ClassVar[int]
    A_PASS_RATE_FIELD_NUMBER: _ClassVar[int]
    B_PASS_RATE_FIELD_NUMBER: _ClassVar[int]
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
    def __init__(self, judge: _Optional[str] = ..., source: _Optional[str] = ..., criterion: _Optional[str] = ..., judge_model: _Optional[str] = ..., tasks: _Optional[int] = ..., a_mean: _Optional[float] = ..., b_mean: _Optional[float] = ..., delta: _Optional[float] = ..., interval: _Optional[_Union[Interval, _Mapping]] = ..., a_pass_rate: _Optional[float] = ..., b_pass_rate: _Optional[float] = ...) -> None: ...

class Comparison(_message.Message):
    __slots__ = ("a", "b", "paired_tasks", "binary_tasks", "a_passed", "b_passed", "delta", "delta_interval", "mcnemar", "flipped_to_pass", "flipped_to_fail", "reward_deltas", "not_comparable", "tasks", "flags", "criteria", "criteria_not_comparable", "list_lengths")
    class ListLengthsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    A_FIELD_NUMBER: _ClassVar[int]
    B_FIELD_NUMBER: _ClassVar[int]
    PAIRED_TASKS_FIELD_NUMBER: _ClassVar[int]
    BINARY_TASKS_FIELD_NUMBER: _ClassVar[int]
    A_PASSED_FIELD_NUMBER: _ClassVar[int]
    B_PASSED_FIELD_NUMBER: _ClassVar[int]
    DELTA_FIELD_NUMBER: _ClassVar[int]
    DELTA_INTERVAL_FIELD_NUMBER: _ClassVar[int]
    MCNEMAR_FIELD_NUMBER: _ClassVar[int]
    FLIPPED_TO_PASS_FIELD_NUMBER: _ClassVar[int]
    FLIPPED_TO_FAIL_FIELD_NUMBER: _ClassVar[int]
    REWARD_DELTAS_FIELD_NUMBER: _ClassVar[int]
    NOT_COMPARABLE_FIELD_NUMBER: _ClassVar[int]
    TASKS_FIELD_NUMBER: _ClassVar[int]
    FLAGS_FIELD_NUMBER: _ClassVar[int]
    CRITERIA_FIELD_NUMBER: _ClassVar[int]
    CRITERIA_NOT_COMPARABLE_FIELD_NUMBER: _ClassVar[int]
    LIST_LENGTHS_FIELD_NUMBER: _ClassVar[int]
    a: SideSummary
    b: SideSummary
    paired_tasks: int
    binary_tasks: int
    a_passed: float
    b_passed: float
    delta: float
    delta_interval: Interval
    mcnemar: McNemar
    flipped_to_pass: _containers.RepeatedScalarFieldContainer[str]
    flipped_to_fail: _containers.RepeatedScalarFieldContainer[str]
    reward_deltas: _containers.RepeatedCompositeFieldContainer[RewardDelta]
    not_comparable: _containers.RepeatedCompositeFieldContainer[NotComparable]
    tasks: _containers.RepeatedCompositeFieldContainer[PairedTask]
    flags: _containers.RepeatedScalarFieldContainer[str]
    criteria: _containers.RepeatedCompositeFieldContainer[CriterionDelta]
    criteria_not_comparable: _containers.RepeatedCompositeFieldContainer[NotComparable]
    list_lengths: _containers.ScalarMap[str, int]
    def __init__(self, a: _Optional[_Union[SideSummary, _Mapping]] = ..., b: _Optional[_Union[SideSummary, _Mapping]] = ..., paired_tasks: _Optional[int] = ..., binary_tasks: _Optional[int] = ..., a_passed: _Optional[float] = ..., b_passed: _Optional[float] = ..., delta: _Optional[float] = ..., delta_interval: _Optional[_Union[Interval, _Mapping]] = ..., mcnemar: _Optional[_Union[McNemar, _Mapping]] = ..., flipped_to_pass: _Optional[_Iterable[str]] = ..., flipped_to_fail: _Optional[_Iterable[str]] = ..., reward_deltas: _Optional[_Iterable[_Union[RewardDelta, _Mapping]]] = ..., not_comparable: _Optional[_Iterable[_Union[NotComparable, _Mapping]]] = ..., tasks: _Optional[_Iterable[_Union[PairedTask, _Mapping]]] = ..., flags: _Optional[_Iterable[str]] = ..., criteria: _Optional[_Iterable[_Union[CriterionDelta, _Mapping]]] = ..., criteria_not_comparable: _Optional[_Iterable[_Union[NotComparable, _Mapping]]] = ..., list_lengths: _Optional[_Mapping[str, int]] = ...) -> None: ...

class CompareSidesResponse(_message.Message):
    __slots__ = ("comparison",)
    COMPARISON_FIELD_NUMBER: _ClassVar[int]
    comparison: Comparison
    def __init__(self, comparison: _Optional[_Union[Comparison, _Mapping]] = ...) -> None: ...

class CancelRunRequest(_message.Message):
    __slots__ = ("run",)
    RUN_FIELD_NUMBER: _ClassVar[int]
    run: str
    def __init__(self, run: _Optional[str] = ...) -> None: ...

class CancelRunResponse(_message.Message):
    __slots__ = ("run", "cancelled_jobs", "attempt_id", "label_matches")
    RUN_FIELD_NUMBER: _ClassVar[int]
    CANCELLED_JOBS_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_ID_FIELD_NUMBER: _ClassVar[int]
    LABEL_MATCHES_FIELD_NUMBER: _ClassVar[int]
    run: _common_pb2.Run
    cancelled_jobs: int
    attempt_id: str
    label_matches: int
    def __init__(self, run: _Optional[_Union[_common_pb2.Run, _Mapping]] = ..., cancelled_jobs: _Optional[int] = ..., attempt_id: _Optional[str] = ..., label_matches: _Optional[int] = ...) -> None: ...

class RunChange(_message.Message):
    __slots__ = ("what", "pinned", "current")
    WHAT_FIELD_NUMBER: _ClassVar[int]
    PINNED_FIELD_NUMBER: _ClassVar[int]
    CURRENT_FIELD_NUMBER: _ClassVar[int]
    what: str
    pinned: str
    current: str
    def __init__(self, what: _Optional[str] = ..., pinned: _Optional[str] = ..., current: _Optional[str] = ...) -> None: ...

class ResumeRunRequest(_message.Message):
    __slots__ = ("run", "dry_run", "allowed_changes", "requested_by")
    RUN_FIELD_NUMBER: _ClassVar[int]
    DRY_RUN_FIELD_NUMBER: _ClassVar[int]
    ALLOWED_CHANGES_FIELD_NUMBER: _ClassVar[int]
    REQUESTED_BY_FIELD_NUMBER: _ClassVar[int]
    run: str
    dry_run: bool
    allowed_changes: _containers.RepeatedCompositeFieldContainer[RunChange]
    requested_by: str
    def __init__(self, run: _Optional[str] = ..., dry_run: _Optional[bool] = ..., allowed_changes: _Optional[_Iterable[_Union[RunChange, _Mapping]]] = ..., requested_by: _Optional[str] = ...) -> None: ...

class RequeuedTrial(_message.Message):
    __slots__ = ("trial_id", "dataset_name", "harness_name", "task_name", "repetition", "reason", "attempt_id", "earlier_attempts", "expected_cost_usd")
    TRIAL_ID_FIELD_NUMBER: _ClassVar[int]
    DATASET_NAME_FIELD_NUMBER: _ClassVar[int]
    HARNESS_NAME_FIELD_NUMBER: _ClassVar[int]
    TASK_NAME_FIELD_NUMBER: _ClassVar[int]
    REPETITION_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_ID_FIELD_NUMBER: _ClassVar[int]
    EARLIER_ATTEMPTS_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_COST_USD_FIELD_NUMBER: _ClassVar[int]
    trial_id: str
    dataset_name: str
    harness_name: str
    task_name: str
    repetition: int
    reason: str
    attempt_id: str
    earlier_attempts: int
    expected_cost_usd: float
    def __init__(self, trial_id: _Optional[str] = ..., dataset_name: _Optional[str] = ..., harness_name: _Optional[str] = ..., task_name: _Optional[str] = ..., repetition: _Optional[int] = ..., reason: _Optional[str] = ..., attempt_id: _Optional[str] = ..., earlier_attempts: _Optional[int] = ..., expected_cost_usd: _Optional[float] = ...) -> None: ...

class ResumeRunResponse(_message.Message):
    __slots__ = ("run", "trials", "already_queued", "still_running", "expected_cost_usd", "cost_known", "repair")
    RUN_FIELD_NUMBER: _ClassVar[int]
    TRIALS_FIELD_NUMBER: _ClassVar[int]
    ALREADY_QUEUED_FIELD_NUMBER: _ClassVar[int]
    STILL_RUNNING_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_COST_USD_FIELD_NUMBER: _ClassVar[int]
    COST_KNOWN_FIELD_NUMBER: _ClassVar[int]
    REPAIR_FIELD_NUMBER: _ClassVar[int]
    run: _common_pb2.Run
    trials: _containers.RepeatedCompositeFieldContainer[RequeuedTrial]
    already_queued: int
    still_running: int
    expected_cost_usd: float
    cost_known: int
    repair: RunRepair
    def __init__(self, run: _Optional[_Union[_common_pb2.Run, _Mapping]] = ..., trials: _Optional[_Iterable[_Union[RequeuedTrial, _Mapping]]] = ..., already_queued: _Optional[int] = ..., still_running: _Optional[int] = ..., expected_cost_usd: _Optional[float] = ..., cost_known: _Optional[int] = ..., repair: _Optional[_Union[RunRepair, _Mapping]] = ...) -> None: ...

class RepairRunRequest(_message.Message):
    __slots__ = ("run", "reasons", "dry_run", "allowed_changes", "requested_by")
    RUN_FIELD_NUMBER: _ClassVar[int]
    REASONS_FIELD_NUMBER: _ClassVar[int]
    DRY_RUN_FIELD_NUMBER: _ClassVar[int]
    ALLOWED_CHANGES_FIELD_NUMBER: _ClassVar[int]
    REQUESTED_BY_FIELD_NUMBER: _ClassVar[int]
    run: str
    reasons: _containers.RepeatedScalarFieldContainer[str]
    dry_run: bool
    allowed_changes: _containers.RepeatedCompositeFieldContainer[RunChange]
    requested_by: str
    def __init__(self, run: _Optional[str] = ..., reasons: _Optional[_Iterable[str]] = ..., dry_run: _Optional[bool] = ..., allowed_changes: _Optional[_Iterable[_Union[RunChange, _Mapping]]] = ..., requested_by: _Optional[str] = ...) -> None: ...

class RepairRunResponse(_message.Message):
    __slots__ = ("run", "trials", "already_queued", "still_running", "expected_cost_usd", "cost_known", "repair")
    RUN_FIELD_NUMBER: _ClassVar[int]
    TRIALS_FIELD_NUMBER: _ClassVar[int]
    ALREADY_QUEUED_FIELD_NUMBER: _ClassVar[int]
    STILL_RUNNING_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_COST_USD_FIELD_NUMBER: _ClassVar[int]
    COST_KNOWN_FIELD_NUMBER: _ClassVar[int]
    REPAIR_FIELD_NUMBER: _ClassVar[int]
    run: _common_pb2.Run
    trials: _containers.RepeatedCompositeFieldContainer[RequeuedTrial]
    already_queued: int
    still_running: int
    expected_cost_usd: float
    cost_known: int
    repair: RunRepair
    def __init__(self, run: _Optional[_Union[_common_pb2.Run, _Mapping]] = ..., trials: _Optional[_Iterable[_Union[RequeuedTrial, _Mapping]]] = ..., already_queued: _Optional[int] = ..., still_running: _Optional[int] = ..., expected_cost_usd: _Optional[float] = ..., cost_known: _Optional[int] = ..., repair: _Optional[_Union[RunRepair, _Mapping]] = ...) -> None: ...

class RunRepair(_message.Message):
    __slots__ = ("kind", "requested_by", "create_time", "reasons", "queued", "allowed_changes")
    KIND_FIELD_NUMBER: _ClassVar[int]
    REQUESTED_BY_FIELD_NUMBER: _ClassVar[int]
    CREATE_TIME_FIELD_NUMBER: _ClassVar[int]
    REASONS_FIELD_NUMBER: _ClassVar[int]
    QUEUED_FIELD_NUMBER: _ClassVar[int]
    ALLOWED_CHANGES_FIELD_NUMBER: _ClassVar[int]
    kind: str
    requested_by: str
    create_time: _timestamp_pb2.Timestamp
    reasons: _containers.RepeatedScalarFieldContainer[str]
    queued: int
    allowed_changes: _containers.RepeatedCompositeFieldContainer[RunChange]
    def __init__(self, kind: _Optional[str] = ..., requested_by: _Optional[str] = ..., create_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., reasons: _Optional[_Iterable[str]] = ..., queued: _Optional[int] = ..., allowed_changes: _Optional[_Iterable[_Union[RunChange, _Mapping]]] = ...) -> None: ...

class ListAttemptsRequest(_message.Message):
    __slots__ = ("parent", "page_size", "page_token", "cell_id", "task_digest", "harness_name", "verdict", "task_tag")
    PARENT_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    CELL_ID_FIELD_NUMBER: _ClassVar[int]
    TASK_DIGEST_FIELD_NUMBER: _ClassVar[int]
    HARNESS_NAME_FIELD_NUMBER: _ClassVar[int]
    VERDICT_FIELD_NUMBER: _ClassVar[int]
    TASK_TAG_FIELD_NUMBER: _ClassVar[int]
    parent: str
    page_size: int
    page_token: str
    cell_id: str
    task_digest: str
    harness_name: str
    verdict: str
    task_tag: str
    def __init__(self, parent: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ..., cell_id: _Optional[str] = ..., task_digest: _Optional[str] = ..., harness_name: _Optional[str] = ..., verdict: _Optional[str] = ..., task_tag: _Optional[str] = ...) -> None: ...

class ListAttemptsResponse(_message.Message):
    __slots__ = ("attempts", "next_page_token")
    ATTEMPTS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    attempts: _containers.RepeatedCompositeFieldContainer[_common_pb2.Attempt]
    next_page_token: str
    def __init__(self, attempts: _Optional[_Iterable[_Union[_common_pb2.Attempt, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class GetAttemptRequest(_message.Message):
    __slots__ = ("attempt",)
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    attempt: str
    def __init__(self, attempt: _Optional[str] = ...) -> None: ...

class GetAttemptResponse(_message.Message):
    __slots__ = ("attempt",)
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    attempt: _common_pb2.Attempt
    def __init__(self, attempt: _Optional[_Union[_common_pb2.Attempt, _Mapping]] = ...) -> None: ...

class ListEventsRequest(_message.Message):
    __slots__ = ("parent", "page_size", "page_token", "max_payload_bytes", "after_seq")
    PARENT_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    MAX_PAYLOAD_BYTES_FIELD_NUMBER: _ClassVar[int]
    AFTER_SEQ_FIELD_NUMBER: _ClassVar[int]
    parent: str
    page_size: int
    page_token: str
    max_payload_bytes: int
    after_seq: int
    def __init__(self, parent: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ..., max_payload_bytes: _Optional[int] = ..., after_seq: _Optional[int] = ...) -> None: ...

class ListEventsResponse(_message.Message):
    __slots__ = ("events", "next_page_token")
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    events: _containers.RepeatedCompositeFieldContainer[_common_pb2.Event]
    next_page_token: str
    def __init__(self, events: _Optional[_Iterable[_Union[_common_pb2.Event, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class ClaimJobRequest(_message.Message):
    __slots__ = ("worker", "lease", "run", "pool", "cell", "max_jobs")
    WORKER_FIELD_NUMBER: _ClassVar[int]
    LEASE_FIELD_NUMBER: _ClassVar[int]
    RUN_FIELD_NUMBER: _ClassVar[int]
    POOL_FIELD_NUMBER: _ClassVar[int]
    CELL_FIELD_NUMBER: _ClassVar[int]
    MAX_JOBS_FIELD_NUMBER: _ClassVar[int]
    worker: str
    lease: _duration_pb2.Duration
    run: str
    pool: str
    cell: str
    max_jobs: int
    def __init__(self, worker: _Optional[str] = ..., lease: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., run: _Optional[str] = ..., pool: _Optional[str] = ..., cell: _Optional[str] = ..., max_jobs: _Optional[int] = ...) -> None: ...

class Job(_message.Message):
    __slots__ = ("id", "lease_token", "lease_expire_time", "attempt", "task", "harness", "spec")
    ID_FIELD_NUMBER: _ClassVar[int]
    LEASE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    LEASE_EXPIRE_TIME_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    TASK_FIELD_NUMBER: _ClassVar[int]
    HARNESS_FIELD_NUMBER: _ClassVar[int]
    SPEC_FIELD_NUMBER: _ClassVar[int]
    id: str
    lease_token: int
    lease_expire_time: _timestamp_pb2.Timestamp
    attempt: _common_pb2.Attempt
    task: _common_pb2.Task
    harness: _common_pb2.Harness
    spec: _common_pb2.RunSpec
    def __init__(self, id: _Optional[str] = ..., lease_token: _Optional[int] = ..., lease_expire_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., attempt: _Optional[_Union[_common_pb2.Attempt, _Mapping]] = ..., task: _Optional[_Union[_common_pb2.Task, _Mapping]] = ..., harness: _Optional[_Union[_common_pb2.Harness, _Mapping]] = ..., spec: _Optional[_Union[_common_pb2.RunSpec, _Mapping]] = ...) -> None: ...

class ClaimJobResponse(_message.Message):
    __slots__ = ("job", "jobs")
    JOB_FIELD_NUMBER: _ClassVar[int]
    JOBS_FIELD_NUMBER: _ClassVar[int]
    job: Job
    jobs: _containers.RepeatedCompositeFieldContainer[Job]
    def __init__(self, job: _Optional[_Union[Job, _Mapping]] = ..., jobs: _Optional[_Iterable[_Union[Job, _Mapping]]] = ...) -> None: ...

class HeartbeatJobRequest(_message.Message):
    __slots__ = ("job", "lease_token", "lease")
    JOB_FIELD_NUMBER: _ClassVar[int]
    LEASE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    LEASE_FIELD_NUMBER: _ClassVar[int]
    job: str
    lease_token: int
    lease: _duration_pb2.Duration
    def __init__(self, job: _Optional[str] = ..., lease_token: _Optional[int] = ..., lease: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ...) -> None: ...

class HeartbeatJobResponse(_message.Message):
    __slots__ = ("lease_expire_time", "cancel_requested")
    LEASE_EXPIRE_TIME_FIELD_NUMBER: _ClassVar[int]
    CANCEL_REQUESTED_FIELD_NUMBER: _ClassVar[int]
    lease_expire_time: _timestamp_pb2.Timestamp
    cancel_requested: bool
    def __init__(self, lease_expire_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., cancel_requested: _Optional[bool] = ...) -> None: ...

class AppendEventsRequest(_message.Message):
    __slots__ = ("job", "lease_token", "events", "first_seq")
    JOB_FIELD_NUMBER: _ClassVar[int]
    LEASE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    FIRST_SEQ_FIELD_NUMBER: _ClassVar[int]
    job: str
    lease_token: int
    events: _containers.RepeatedCompositeFieldContainer[_common_pb2.Event]
    first_seq: int
    def __init__(self, job: _Optional[str] = ..., lease_token: _Optional[int] = ..., events: _Optional[_Iterable[_Union[_common_pb2.Event, _Mapping]]] = ..., first_seq: _Optional[int] = ...) -> None: ...

class AppendEventsResponse(_message.Message):
    __slots__ = ("last_seq",)
    LAST_SEQ_FIELD_NUMBER: _ClassVar[int]
    last_seq: int
    def __init__(self, last_seq: _Optional[int] = ...) -> None: ...

class CompleteJobRequest(_message.Message):
    __slots__ = ("job", "lease_token", "outcome", "exit_code", "error", "artifacts", "score", "agent_version", "start_time", "end_time", "agent_name", "judge_scores", "claim_next")
    JOB_FIELD_NUMBER: _ClassVar[int]
    LEASE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    EXIT_CODE_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    ARTIFACTS_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    AGENT_VERSION_FIELD_NUMBER: _ClassVar[int]
    START_TIME_FIELD_NUMBER: _ClassVar[int]
    END_TIME_FIELD_NUMBER: _ClassVar[int]
    AGENT_NAME_FIELD_NUMBER: _ClassVar[int]
    JUDGE_SCORES_FIELD_NUMBER: _ClassVar[int]
    CLAIM_NEXT_FIELD_NUMBER: _ClassVar[int]
    job: str
    lease_token: int
    outcome: _common_pb2.Outcome
    exit_code: int
    error: str
    artifacts: _containers.RepeatedCompositeFieldContainer[_common_pb2.Artifact]
    score: _common_pb2.Score
    agent_version: str
    start_time: _timestamp_pb2.Timestamp
    end_time: _timestamp_pb2.Timestamp
    agent_name: str
    judge_scores: _containers.RepeatedCompositeFieldContainer[_common_pb2.Score]
    claim_next: ClaimJobRequest
    def __init__(self, job: _Optional[str] = ..., lease_token: _Optional[int] = ..., outcome: _Optional[_Union[_common_pb2.Outcome, str]] = ..., exit_code: _Optional[int] = ..., error: _Optional[str] = ..., artifacts: _Optional[_Iterable[_Union[_common_pb2.Artifact, _Mapping]]] = ..., score: _Optional[_Union[_common_pb2.Score, _Mapping]] = ..., agent_version: _Optional[str] = ..., start_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., end_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., agent_name: _Optional[str] = ..., judge_scores: _Optional[_Iterable[_Union[_common_pb2.Score, _Mapping]]] = ..., claim_next: _Optional[_Union[ClaimJobRequest, _Mapping]] = ...) -> None: ...

class CompleteJobResponse(_message.Message):
    __slots__ = ("attempt", "retry_attempt_id", "next_job", "next_jobs")
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    RETRY_ATTEMPT_ID_FIELD_NUMBER: _ClassVar[int]
    NEXT_JOB_FIELD_NUMBER: _ClassVar[int]
    NEXT_JOBS_FIELD_NUMBER: _ClassVar[int]
    attempt: _common_pb2.Attempt
    retry_attempt_id: str
    next_job: Job
    next_jobs: _containers.RepeatedCompositeFieldContainer[Job]
    def __init__(self, attempt: _Optional[_Union[_common_pb2.Attempt, _Mapping]] = ..., retry_attempt_id: _Optional[str] = ..., next_job: _Optional[_Union[Job, _Mapping]] = ..., next_jobs: _Optional[_Iterable[_Union[Job, _Mapping]]] = ...) -> None: ...

class ReleaseJobRequest(_message.Message):
    __slots__ = ("job", "lease_token", "reason")
    JOB_FIELD_NUMBER: _ClassVar[int]
    LEASE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    job: str
    lease_token: int
    reason: str
    def __init__(self, job: _Optional[str] = ..., lease_token: _Optional[int] = ..., reason: _Optional[str] = ...) -> None: ...

class ReleaseJobResponse(_message.Message):
    __slots__ = ("retry_attempt_id",)
    RETRY_ATTEMPT_ID_FIELD_NUMBER: _ClassVar[int]
    retry_attempt_id: str
    def __init__(self, retry_attempt_id: _Optional[str] = ...) -> None: ...

class Blob(_message.Message):
    __slots__ = ("digest", "data")
    DIGEST_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    digest: str
    data: bytes
    def __init__(self, digest: _Optional[str] = ..., data: _Optional[bytes] = ...) -> None: ...

class PutBlobsRequest(_message.Message):
    __slots__ = ("blobs",)
    BLOBS_FIELD_NUMBER: _ClassVar[int]
    blobs: _containers.RepeatedCompositeFieldContainer[Blob]
    def __init__(self, blobs: _Optional[_Iterable[_Union[Blob, _Mapping]]] = ...) -> None: ...

class PutBlobsResponse(_message.Message):
    __slots__ = ("digests",)
    DIGESTS_FIELD_NUMBER: _ClassVar[int]
    digests: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, digests: _Optional[_Iterable[str]] = ...) -> None: ...

class GetBlobsRequest(_message.Message):
    __slots__ = ("digests",)
    DIGESTS_FIELD_NUMBER: _ClassVar[int]
    digests: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, digests: _Optional[_Iterable[str]] = ...) -> None: ...

class GetBlobsResponse(_message.Message):
    __slots__ = ("blobs",)
    BLOBS_FIELD_NUMBER: _ClassVar[int]
    blobs: _containers.RepeatedCompositeFieldContainer[Blob]
    def __init__(self, blobs: _Optional[_Iterable[_Union[Blob, _Mapping]]] = ...) -> None: ...

class FindMissingBlobsRequest(_message.Message):
    __slots__ = ("digests",)
    DIGESTS_FIELD_NUMBER: _ClassVar[int]
    digests: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, digests: _Optional[_Iterable[str]] = ...) -> None: ...

class FindMissingBlobsResponse(_message.Message):
    __slots__ = ("missing",)
    MISSING_FIELD_NUMBER: _ClassVar[int]
    missing: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, missing: _Optional[_Iterable[str]] = ...) -> None: ...

class ListDatasetsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class DatasetSummary(_message.Message):
    __slots__ = ("name", "digest", "dataset_name", "source", "tasks", "runs", "imports", "harness_names", "last_used_time")
    NAME_FIELD_NUMBER: _ClassVar[int]
    DIGEST_FIELD_NUMBER: _ClassVar[int]
    DATASET_NAME_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    TASKS_FIELD_NUMBER: _ClassVar[int]
    RUNS_FIELD_NUMBER: _ClassVar[int]
    IMPORTS_FIELD_NUMBER: _ClassVar[int]
    HARNESS_NAMES_FIELD_NUMBER: _ClassVar[int]
    LAST_USED_TIME_FIELD_NUMBER: _ClassVar[int]
    name: str
    digest: str
    dataset_name: str
    source: str
    tasks: int
    runs: int
    imports: int
    harness_names: _containers.RepeatedScalarFieldContainer[str]
    last_used_time: _timestamp_pb2.Timestamp
    def __init__(self, name: _Optional[str] = ..., digest: _Optional[str] = ..., dataset_name: _Optional[str] = ..., source: _Optional[str] = ..., tasks: _Optional[int] = ..., runs: _Optional[int] = ..., imports: _Optional[int] = ..., harness_names: _Optional[_Iterable[str]] = ..., last_used_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class ListDatasetsResponse(_message.Message):
    __slots__ = ("datasets",)
    DATASETS_FIELD_NUMBER: _ClassVar[int]
    datasets: _containers.RepeatedCompositeFieldContainer[DatasetSummary]
    def __init__(self, datasets: _Optional[_Iterable[_Union[DatasetSummary, _Mapping]]] = ...) -> None: ...

class ListTasksRequest(_message.Message):
    __slots__ = ("parent", "page_size", "page_token")
    PARENT_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    parent: str
    page_size: int
    page_token: str
    def __init__(self, parent: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class TaskSummary(_message.Message):
    __slots__ = ("task_name", "digest", "attempts", "passed", "failed", "errored", "scorer_fingerprints", "harness_names", "origin")
    TASK_NAME_FIELD_NUMBER: _ClassVar[int]
    DIGEST_FIELD_NUMBER: _ClassVar[int]
    ATTEMPTS_FIELD_NUMBER: _ClassVar[int]
    PASSED_FIELD_NUMBER: _ClassVar[int]
    FAILED_FIELD_NUMBER: _ClassVar[int]
    ERRORED_FIELD_NUMBER: _ClassVar[int]
    SCORER_FINGERPRINTS_FIELD_NUMBER: _ClassVar[int]
    HARNESS_NAMES_FIELD_NUMBER: _ClassVar[int]
    ORIGIN_FIELD_NUMBER: _ClassVar[int]
    task_name: str
    digest: str
    attempts: int
    passed: int
    failed: int
    errored: int
    scorer_fingerprints: _containers.RepeatedScalarFieldContainer[str]
    harness_names: _containers.RepeatedScalarFieldContainer[str]
    origin: str
    def __init__(self, task_name: _Optional[str] = ..., digest: _Optional[str] = ..., attempts: _Optional[int] = ..., passed: _Optional[int] = ..., failed: _Optional[int] = ..., errored: _Optional[int] = ..., scorer_fingerprints: _Optional[_Iterable[str]] = ..., harness_names: _Optional[_Iterable[str]] = ..., origin: _Optional[str] = ...) -> None: ...

class ListTasksResponse(_message.Message):
    __slots__ = ("dataset_name", "dataset_digest", "tasks", "next_page_token")
    DATASET_NAME_FIELD_NUMBER: _ClassVar[int]
    DATASET_DIGEST_FIELD_NUMBER: _ClassVar[int]
    TASKS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    dataset_name: str
    dataset_digest: str
    tasks: _containers.RepeatedCompositeFieldContainer[TaskSummary]
    next_page_token: str
    def __init__(self, dataset_name: _Optional[str] = ..., dataset_digest: _Optional[str] = ..., tasks: _Optional[_Iterable[_Union[TaskSummary, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class ListHarnessesRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class HarnessSummary(_message.Message):
    __slots__ = ("name", "digest", "harness_name", "kind", "agent", "agent_version", "model", "env", "runs", "imports", "trials", "dataset_names", "last_used_time")
    NAME_FIELD_NUMBER: _ClassVar[int]
    DIGEST_FIELD_NUMBER: _ClassVar[int]
    HARNESS_NAME_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    AGENT_FIELD_NUMBER: _ClassVar[int]
    AGENT_VERSION_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    ENV_FIELD_NUMBER: _ClassVar[int]
    RUNS_FIELD_NUMBER: _ClassVar[int]
    IMPORTS_FIELD_NUMBER: _ClassVar[int]
    TRIALS_FIELD_NUMBER: _ClassVar[int]
    DATASET_NAMES_FIELD_NUMBER: _ClassVar[int]
    LAST_USED_TIME_FIELD_NUMBER: _ClassVar[int]
    name: str
    digest: str
    harness_name: str
    kind: str
    agent: str
    agent_version: str
    model: str
    env: _containers.RepeatedScalarFieldContainer[str]
    runs: int
    imports: int
    trials: int
    dataset_names: _containers.RepeatedScalarFieldContainer[str]
    last_used_time: _timestamp_pb2.Timestamp
    def __init__(self, name: _Optional[str] = ..., digest: _Optional[str] = ..., harness_name: _Optional[str] = ..., kind: _Optional[str] = ..., agent: _Optional[str] = ..., agent_version: _Optional[str] = ..., model: _Optional[str] = ..., env: _Optional[_Iterable[str]] = ..., runs: _Optional[int] = ..., imports: _Optional[int] = ..., trials: _Optional[int] = ..., dataset_names: _Optional[_Iterable[str]] = ..., last_used_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class ListHarnessesResponse(_message.Message):
    __slots__ = ("harnesses",)
    HARNESSES_FIELD_NUMBER: _ClassVar[int]
    harnesses: _containers.RepeatedCompositeFieldContainer[HarnessSummary]
    def __init__(self, harnesses: _Optional[_Iterable[_Union[HarnessSummary, _Mapping]]] = ...) -> None: ...

class ListScorersRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ScoredTask(_message.Message):
    __slots__ = ("task_name", "task_digest", "attempts")
    TASK_NAME_FIELD_NUMBER: _ClassVar[int]
    TASK_DIGEST_FIELD_NUMBER: _ClassVar[int]
    ATTEMPTS_FIELD_NUMBER: _ClassVar[int]
    task_name: str
    task_digest: str
    attempts: int
    def __init__(self, task_name: _Optional[str] = ..., task_digest: _Optional[str] = ..., attempts: _Optional[int] = ...) -> None: ...

class ScorerSummary(_message.Message):
    __slots__ = ("fingerprint", "scorer", "judge_model", "reward_names", "attempts", "tasks", "dataset_names", "task_count")
    FINGERPRINT_FIELD_NUMBER: _ClassVar[int]
    SCORER_FIELD_NUMBER: _ClassVar[int]
    JUDGE_MODEL_FIELD_NUMBER: _ClassVar[int]
    REWARD_NAMES_FIELD_NUMBER: _ClassVar[int]
    ATTEMPTS_FIELD_NUMBER: _ClassVar[int]
    TASKS_FIELD_NUMBER: _ClassVar[int]
    DATASET_NAMES_FIELD_NUMBER: _ClassVar[int]
    TASK_COUNT_FIELD_NUMBER: _ClassVar[int]
    fingerprint: str
    scorer: str
    judge_model: str
    reward_names: _containers.RepeatedScalarFieldContainer[str]
    attempts: int
    tasks: _containers.RepeatedCompositeFieldContainer[ScoredTask]
    dataset_names: _containers.RepeatedScalarFieldContainer[str]
    task_count: int
    def __init__(self, fingerprint: _Optional[str] = ..., scorer: _Optional[str] = ..., judge_model: _Optional[str] = ..., reward_names: _Optional[_Iterable[str]] = ..., attempts: _Optional[int] = ..., tasks: _Optional[_Iterable[_Union[ScoredTask, _Mapping]]] = ..., dataset_names: _Optional[_Iterable[str]] = ..., task_count: _Optional[int] = ...) -> None: ...

class ListScorersResponse(_message.Message):
    __slots__ = ("scorers",)
    SCORERS_FIELD_NUMBER: _ClassVar[int]
    scorers: _containers.RepeatedCompositeFieldContainer[ScorerSummary]
    def __init__(self, scorers: _Optional[_Iterable[_Union[ScorerSummary, _Mapping]]] = ...) -> None: ...

class ListJudgesRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class JudgeSummary(_message.Message):
    __slots__ = ("judge", "models", "attempts", "run_ids", "failed", "fingerprints")
    JUDGE_FIELD_NUMBER: _ClassVar[int]
    MODELS_FIELD_NUMBER: _ClassVar[int]
    ATTEMPTS_FIELD_NUMBER: _ClassVar[int]
    RUN_IDS_FIELD_NUMBER: _ClassVar[int]
    FAILED_FIELD_NUMBER: _ClassVar[int]
    FINGERPRINTS_FIELD_NUMBER: _ClassVar[int]
    judge: str
    models: _containers.RepeatedScalarFieldContainer[str]
    attempts: int
    run_ids: _containers.RepeatedScalarFieldContainer[str]
    failed: int
    fingerprints: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, judge: _Optional[str] = ..., models: _Optional[_Iterable[str]] = ..., attempts: _Optional[int] = ..., run_ids: _Optional[_Iterable[str]] = ..., failed: _Optional[int] = ..., fingerprints: _Optional[_Iterable[str]] = ...) -> None: ...

class ListJudgesResponse(_message.Message):
    __slots__ = ("judges", "note")
    JUDGES_FIELD_NUMBER: _ClassVar[int]
    NOTE_FIELD_NUMBER: _ClassVar[int]
    judges: _containers.RepeatedCompositeFieldContainer[JudgeSummary]
    note: str
    def __init__(self, judges: _Optional[_Iterable[_Union[JudgeSummary, _Mapping]]] = ..., note: _Optional[str] = ...) -> None: ...

class GetCriterionTableRequest(_message.Message):
    __slots__ = ("dataset", "source")
    DATASET_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    dataset: str
    source: str
    def __init__(self, dataset: _Optional[str] = ..., source: _Optional[str] = ...) -> None: ...

class CriterionSource(_message.Message):
    __slots__ = ("harness_name", "run_id", "run_label", "kind", "cell_id", "model", "create_time", "trials", "complete", "other_cells")
    HARNESS_NAME_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    RUN_LABEL_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    CELL_ID_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    CREATE_TIME_FIELD_NUMBER: _ClassVar[int]
    TRIALS_FIELD_NUMBER: _ClassVar[int]
    COMPLETE_FIELD_NUMBER: _ClassVar[int]
    OTHER_CELLS_FIELD_NUMBER: _ClassVar[int]
    harness_name: str
    run_id: str
    run_label: str
    kind: str
    cell_id: str
    model: str
    create_time: _timestamp_pb2.Timestamp
    trials: int
    complete: bool
    other_cells: int
    def __init__(self, harness_name: _Optional[str] = ..., run_id: _Optional[str] = ..., run_label: _Optional[str] = ..., kind: _Optional[str] = ..., cell_id: _Optional[str] = ..., model: _Optional[str] = ..., create_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., trials: _Optional[int] = ..., complete: _Optional[bool] = ..., other_cells: _Optional[int] = ...) -> None: ...

class CriterionCell(_message.Message):
    __slots__ = ("samples", "value", "excluded", "best")
    SAMPLES_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    EXCLUDED_FIELD_NUMBER: _ClassVar[int]
    BEST_FIELD_NUMBER: _ClassVar[int]
    samples: int
    value: float
    excluded: int
    best: bool
    def __init__(self, samples: _Optional[int] = ..., value: _Optional[float] = ..., excluded: _Optional[int] = ..., best: _Optional[bool] = ...) -> None: ...

class CriterionRow(_message.Message):
    __slots__ = ("criterion", "task_digest", "unit", "lower_is_better", "cells")
    CRITERION_FIELD_NUMBER: _ClassVar[int]
    TASK_DIGEST_FIELD_NUMBER: _ClassVar[int]
    UNIT_FIELD_NUMBER: _ClassVar[int]
    LOWER_IS_BETTER_FIELD_NUMBER: _ClassVar[int]
    CELLS_FIELD_NUMBER: _ClassVar[int]
    criterion: str
    task_digest: str
    unit: str
    lower_is_better: bool
    cells: _containers.RepeatedCompositeFieldContainer[CriterionCell]
    def __init__(self, criterion: _Optional[str] = ..., task_digest: _Optional[str] = ..., unit: _Optional[str] = ..., lower_is_better: _Optional[bool] = ..., cells: _Optional[_Iterable[_Union[CriterionCell, _Mapping]]] = ...) -> None: ...

class CriterionTable(_message.Message):
    __slots__ = ("dataset_name", "dataset_digest", "source", "sources", "rows")
    DATASET_NAME_FIELD_NUMBER: _ClassVar[int]
    DATASET_DIGEST_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    SOURCES_FIELD_NUMBER: _ClassVar[int]
    ROWS_FIELD_NUMBER: _ClassVar[int]
    dataset_name: str
    dataset_digest: str
    source: str
    sources: _containers.RepeatedCompositeFieldContainer[CriterionSource]
    rows: _containers.RepeatedCompositeFieldContainer[CriterionRow]
    def __init__(self, dataset_name: _Optional[str] = ..., dataset_digest: _Optional[str] = ..., source: _Optional[str] = ..., sources: _Optional[_Iterable[_Union[CriterionSource, _Mapping]]] = ..., rows: _Optional[_Iterable[_Union[CriterionRow, _Mapping]]] = ...) -> None: ...

class GetCriterionTableResponse(_message.Message):
    __slots__ = ("table",)
    TABLE_FIELD_NUMBER: _ClassVar[int]
    table: CriterionTable
    def __init__(self, table: _Optional[_Union[CriterionTable, _Mapping]] = ...) -> None: ...

class ListAttemptUsageRequest(_message.Message):
    __slots__ = ("parent",)
    PARENT_FIELD_NUMBER: _ClassVar[int]
    parent: str
    def __init__(self, parent: _Optional[str] = ...) -> None: ...

class AttemptUsage(_message.Message):
    __slots__ = ("attempt_id", "input_tokens", "output_tokens", "cost_usd", "usage_events")
    ATTEMPT_ID_FIELD_NUMBER: _ClassVar[int]
    INPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    COST_USD_FIELD_NUMBER: _ClassVar[int]
    USAGE_EVENTS_FIELD_NUMBER: _ClassVar[int]
    attempt_id: str
    input_tokens: int
    output_tokens: int
    cost_usd: float
    usage_events: int
    def __init__(self, attempt_id: _Optional[str] = ..., input_tokens: _Optional[int] = ..., output_tokens: _Optional[int] = ..., cost_usd: _Optional[float] = ..., usage_events: _Optional[int] = ...) -> None: ...

class ListAttemptUsageResponse(_message.Message):
    __slots__ = ("attempts",)
    ATTEMPTS_FIELD_NUMBER: _ClassVar[int]
    attempts: _containers.RepeatedCompositeFieldContainer[AttemptUsage]
    def __init__(self, attempts: _Optional[_Iterable[_Union[AttemptUsage, _Mapping]]] = ...) -> None: ...

class ListHistoryMiningRequest(_message.Message):
    __slots__ = ("parent",)
    PARENT_FIELD_NUMBER: _ClassVar[int]
    parent: str
    def __init__(self, parent: _Optional[str] = ...) -> None: ...

class MiningEvent(_message.Message):
    __slots__ = ("seq", "pattern", "command", "possible")
    SEQ_FIELD_NUMBER: _ClassVar[int]
    PATTERN_FIELD_NUMBER: _ClassVar[int]
    COMMAND_FIELD_NUMBER: _ClassVar[int]
    POSSIBLE_FIELD_NUMBER: _ClassVar[int]
    seq: int
    pattern: str
    command: str
    possible: bool
    def __init__(self, seq: _Optional[int] = ..., pattern: _Optional[str] = ..., command: _Optional[str] = ..., possible: _Optional[bool] = ...) -> None: ...

class MinedAttempt(_message.Message):
    __slots__ = ("attempt_id", "cell_id", "harness_name", "model", "task_name", "repetition", "latest", "mining_events", "patterns", "events")
    ATTEMPT_ID_FIELD_NUMBER: _ClassVar[int]
    CELL_ID_FIELD_NUMBER: _ClassVar[int]
    HARNESS_NAME_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    TASK_NAME_FIELD_NUMBER: _ClassVar[int]
    REPETITION_FIELD_NUMBER: _ClassVar[int]
    LATEST_FIELD_NUMBER: _ClassVar[int]
    MINING_EVENTS_FIELD_NUMBER: _ClassVar[int]
    PATTERNS_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    attempt_id: str
    cell_id: str
    harness_name: str
    model: str
    task_name: str
    repetition: int
    latest: bool
    mining_events: int
    patterns: _containers.RepeatedScalarFieldContainer[str]
    events: _containers.RepeatedCompositeFieldContainer[MiningEvent]
    def __init__(self, attempt_id: _Optional[str] = ..., cell_id: _Optional[str] = ..., harness_name: _Optional[str] = ..., model: _Optional[str] = ..., task_name: _Optional[str] = ..., repetition: _Optional[int] = ..., latest: _Optional[bool] = ..., mining_events: _Optional[int] = ..., patterns: _Optional[_Iterable[str]] = ..., events: _Optional[_Iterable[_Union[MiningEvent, _Mapping]]] = ...) -> None: ...

class ListHistoryMiningResponse(_message.Message):
    __slots__ = ("attempts", "truncated")
    ATTEMPTS_FIELD_NUMBER: _ClassVar[int]
    TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    attempts: _containers.RepeatedCompositeFieldContainer[MinedAttempt]
    truncated: bool
    def __init__(self, attempts: _Optional[_Iterable[_Union[MinedAttempt, _Mapping]]] = ..., truncated: _Optional[bool] = ...) -> None: ...

class RecordJudgeScoresRequest(_message.Message):
    __slots__ = ("attempts",)
    ATTEMPTS_FIELD_NUMBER: _ClassVar[int]
    attempts: _containers.RepeatedCompositeFieldContainer[JudgedAttempt]
    def __init__(self, attempts: _Optional[_Iterable[_Union[JudgedAttempt, _Mapping]]] = ...) -> None: ...

class JudgedAttempt(_message.Message):
    __slots__ = ("attempt_id", "scores")
    ATTEMPT_ID_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    attempt_id: str
    scores: _containers.RepeatedCompositeFieldContainer[_common_pb2.Score]
    def __init__(self, attempt_id: _Optional[str] = ..., scores: _Optional[_Iterable[_Union[_common_pb2.Score, _Mapping]]] = ...) -> None: ...

class RecordJudgeScoresResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class GetTaskRequest(_message.Message):
    __slots__ = ("name",)
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class GetTaskResponse(_message.Message):
    __slots__ = ("task",)
    TASK_FIELD_NUMBER: _ClassVar[int]
    task: _common_pb2.Task
    def __init__(self, task: _Optional[_Union[_common_pb2.Task, _Mapping]] = ...) -> None: ...

class RecordDatasetRequest(_message.Message):
    __slots__ = ("dataset",)
    DATASET_FIELD_NUMBER: _ClassVar[int]
    dataset: _common_pb2.Dataset
    def __init__(self, dataset: _Optional[_Union[_common_pb2.Dataset, _Mapping]] = ...) -> None: ...

class RecordDatasetResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class AuditFinding(_message.Message):
    __slots__ = ("kind", "severity", "detail")
    KIND_FIELD_NUMBER: _ClassVar[int]
    SEVERITY_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    kind: str
    severity: str
    detail: str
    def __init__(self, kind: _Optional[str] = ..., severity: _Optional[str] = ..., detail: _Optional[str] = ...) -> None: ...

class TaskAudit(_message.Message):
    __slots__ = ("task_name", "task_digest", "verdict", "findings", "error", "image", "network_mode", "seconds")
    TASK_NAME_FIELD_NUMBER: _ClassVar[int]
    TASK_DIGEST_FIELD_NUMBER: _ClassVar[int]
    VERDICT_FIELD_NUMBER: _ClassVar[int]
    FINDINGS_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    IMAGE_FIELD_NUMBER: _ClassVar[int]
    NETWORK_MODE_FIELD_NUMBER: _ClassVar[int]
    SECONDS_FIELD_NUMBER: _ClassVar[int]
    task_name: str
    task_digest: str
    verdict: str
    findings: _containers.RepeatedCompositeFieldContainer[AuditFinding]
    error: str
    image: str
    network_mode: str
    seconds: float
    def __init__(self, task_name: _Optional[str] = ..., task_digest: _Optional[str] = ..., verdict: _Optional[str] = ..., findings: _Optional[_Iterable[_Union[AuditFinding, _Mapping]]] = ..., error: _Optional[str] = ..., image: _Optional[str] = ..., network_mode: _Optional[str] = ..., seconds: _Optional[float] = ...) -> None: ...

class DatasetAudit(_message.Message):
    __slots__ = ("name", "dataset_name", "dataset_digest", "audit_time", "verdict", "tasks")
    NAME_FIELD_NUMBER: _ClassVar[int]
    DATASET_NAME_FIELD_NUMBER: _ClassVar[int]
    DATASET_DIGEST_FIELD_NUMBER: _ClassVar[int]
    AUDIT_TIME_FIELD_NUMBER: _ClassVar[int]
    VERDICT_FIELD_NUMBER: _ClassVar[int]
    TASKS_FIELD_NUMBER: _ClassVar[int]
    name: str
    dataset_name: str
    dataset_digest: str
    audit_time: _timestamp_pb2.Timestamp
    verdict: str
    tasks: _containers.RepeatedCompositeFieldContainer[TaskAudit]
    def __init__(self, name: _Optional[str] = ..., dataset_name: _Optional[str] = ..., dataset_digest: _Optional[str] = ..., audit_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., verdict: _Optional[str] = ..., tasks: _Optional[_Iterable[_Union[TaskAudit, _Mapping]]] = ...) -> None: ...

class RecordDatasetAuditRequest(_message.Message):
    __slots__ = ("audit",)
    AUDIT_FIELD_NUMBER: _ClassVar[int]
    audit: DatasetAudit
    def __init__(self, audit: _Optional[_Union[DatasetAudit, _Mapping]] = ...) -> None: ...

class RecordDatasetAuditResponse(_message.Message):
    __slots__ = ("audit",)
    AUDIT_FIELD_NUMBER: _ClassVar[int]
    audit: DatasetAudit
    def __init__(self, audit: _Optional[_Union[DatasetAudit, _Mapping]] = ...) -> None: ...
