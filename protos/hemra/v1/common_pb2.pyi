import datetime

from google.protobuf import duration_pb2 as _duration_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class AttemptState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ATTEMPT_STATE_UNSPECIFIED: _ClassVar[AttemptState]
    ATTEMPT_STATE_QUEUED: _ClassVar[AttemptState]
    ATTEMPT_STATE_RUNNING: _ClassVar[AttemptState]
    ATTEMPT_STATE_FINISHED: _ClassVar[AttemptState]

class Outcome(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    OUTCOME_UNSPECIFIED: _ClassVar[Outcome]
    OUTCOME_COMPLETED: _ClassVar[Outcome]
    OUTCOME_HARNESS_FAILED: _ClassVar[Outcome]
    OUTCOME_TIMED_OUT: _ClassVar[Outcome]
    OUTCOME_INFRA_FAILED: _ClassVar[Outcome]
    OUTCOME_CANCELLED: _ClassVar[Outcome]

class ScoreState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SCORE_STATE_UNSPECIFIED: _ClassVar[ScoreState]
    SCORE_STATE_SCORED: _ClassVar[ScoreState]
    SCORE_STATE_SCORER_FAILED: _ClassVar[ScoreState]
ATTEMPT_STATE_UNSPECIFIED: AttemptState
ATTEMPT_STATE_QUEUED: AttemptState
ATTEMPT_STATE_RUNNING: AttemptState
ATTEMPT_STATE_FINISHED: AttemptState
OUTCOME_UNSPECIFIED: Outcome
OUTCOME_COMPLETED: Outcome
OUTCOME_HARNESS_FAILED: Outcome
OUTCOME_TIMED_OUT: Outcome
OUTCOME_INFRA_FAILED: Outcome
OUTCOME_CANCELLED: Outcome
SCORE_STATE_UNSPECIFIED: ScoreState
SCORE_STATE_SCORED: ScoreState
SCORE_STATE_SCORER_FAILED: ScoreState

class TaskFile(_message.Message):
    __slots__ = ("path", "blob_digest", "size_bytes", "executable")
    PATH_FIELD_NUMBER: _ClassVar[int]
    BLOB_DIGEST_FIELD_NUMBER: _ClassVar[int]
    SIZE_BYTES_FIELD_NUMBER: _ClassVar[int]
    EXECUTABLE_FIELD_NUMBER: _ClassVar[int]
    path: str
    blob_digest: str
    size_bytes: int
    executable: bool
    def __init__(self, path: _Optional[str] = ..., blob_digest: _Optional[str] = ..., size_bytes: _Optional[int] = ..., executable: _Optional[bool] = ...) -> None: ...

class CopyStep(_message.Message):
    __slots__ = ("source", "destination", "line")
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    DESTINATION_FIELD_NUMBER: _ClassVar[int]
    LINE_FIELD_NUMBER: _ClassVar[int]
    source: str
    destination: str
    line: int
    def __init__(self, source: _Optional[str] = ..., destination: _Optional[str] = ..., line: _Optional[int] = ...) -> None: ...

class Environment(_message.Message):
    __slots__ = ("base_image", "workdir", "env", "copies", "cpus", "memory_mb", "host_unsupported", "base_commit")
    class EnvEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    BASE_IMAGE_FIELD_NUMBER: _ClassVar[int]
    WORKDIR_FIELD_NUMBER: _ClassVar[int]
    ENV_FIELD_NUMBER: _ClassVar[int]
    COPIES_FIELD_NUMBER: _ClassVar[int]
    CPUS_FIELD_NUMBER: _ClassVar[int]
    MEMORY_MB_FIELD_NUMBER: _ClassVar[int]
    HOST_UNSUPPORTED_FIELD_NUMBER: _ClassVar[int]
    BASE_COMMIT_FIELD_NUMBER: _ClassVar[int]
    base_image: str
    workdir: str
    env: _containers.ScalarMap[str, str]
    copies: _containers.RepeatedCompositeFieldContainer[CopyStep]
    cpus: float
    memory_mb: int
    host_unsupported: _containers.RepeatedScalarFieldContainer[str]
    base_commit: str
    def __init__(self, base_image: _Optional[str] = ..., workdir: _Optional[str] = ..., env: _Optional[_Mapping[str, str]] = ..., copies: _Optional[_Iterable[_Union[CopyStep, _Mapping]]] = ..., cpus: _Optional[float] = ..., memory_mb: _Optional[int] = ..., host_unsupported: _Optional[_Iterable[str]] = ..., base_commit: _Optional[str] = ...) -> None: ...

class Task(_message.Message):
    __slots__ = ("name", "digest", "task_name", "instruction", "files", "agent_timeout", "verifier_timeout", "verifier_env", "solution_env", "environment", "has_solution", "verifier_isolation", "origin", "tags", "harbor_digest")
    class VerifierEnvEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    class SolutionEnvEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    NAME_FIELD_NUMBER: _ClassVar[int]
    DIGEST_FIELD_NUMBER: _ClassVar[int]
    TASK_NAME_FIELD_NUMBER: _ClassVar[int]
    INSTRUCTION_FIELD_NUMBER: _ClassVar[int]
    FILES_FIELD_NUMBER: _ClassVar[int]
    AGENT_TIMEOUT_FIELD_NUMBER: _ClassVar[int]
    VERIFIER_TIMEOUT_FIELD_NUMBER: _ClassVar[int]
    VERIFIER_ENV_FIELD_NUMBER: _ClassVar[int]
    SOLUTION_ENV_FIELD_NUMBER: _ClassVar[int]
    ENVIRONMENT_FIELD_NUMBER: _ClassVar[int]
    HAS_SOLUTION_FIELD_NUMBER: _ClassVar[int]
    VERIFIER_ISOLATION_FIELD_NUMBER: _ClassVar[int]
    ORIGIN_FIELD_NUMBER: _ClassVar[int]
    TAGS_FIELD_NUMBER: _ClassVar[int]
    HARBOR_DIGEST_FIELD_NUMBER: _ClassVar[int]
    name: str
    digest: str
    task_name: str
    instruction: str
    files: _containers.RepeatedCompositeFieldContainer[TaskFile]
    agent_timeout: _duration_pb2.Duration
    verifier_timeout: _duration_pb2.Duration
    verifier_env: _containers.ScalarMap[str, str]
    solution_env: _containers.ScalarMap[str, str]
    environment: Environment
    has_solution: bool
    verifier_isolation: str
    origin: str
    tags: _containers.RepeatedScalarFieldContainer[str]
    harbor_digest: str
    def __init__(self, name: _Optional[str] = ..., digest: _Optional[str] = ..., task_name: _Optional[str] = ..., instruction: _Optional[str] = ..., files: _Optional[_Iterable[_Union[TaskFile, _Mapping]]] = ..., agent_timeout: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., verifier_timeout: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., verifier_env: _Optional[_Mapping[str, str]] = ..., solution_env: _Optional[_Mapping[str, str]] = ..., environment: _Optional[_Union[Environment, _Mapping]] = ..., has_solution: _Optional[bool] = ..., verifier_isolation: _Optional[str] = ..., origin: _Optional[str] = ..., tags: _Optional[_Iterable[str]] = ..., harbor_digest: _Optional[str] = ...) -> None: ...

class Dataset(_message.Message):
    __slots__ = ("name", "digest", "dataset_name", "source", "tasks")
    NAME_FIELD_NUMBER: _ClassVar[int]
    DIGEST_FIELD_NUMBER: _ClassVar[int]
    DATASET_NAME_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    TASKS_FIELD_NUMBER: _ClassVar[int]
    name: str
    digest: str
    dataset_name: str
    source: str
    tasks: _containers.RepeatedCompositeFieldContainer[Task]
    def __init__(self, name: _Optional[str] = ..., digest: _Optional[str] = ..., dataset_name: _Optional[str] = ..., source: _Optional[str] = ..., tasks: _Optional[_Iterable[_Union[Task, _Mapping]]] = ...) -> None: ...

class Harness(_message.Message):
    __slots__ = ("name", "digest", "harness_name", "kind", "source_text", "agent", "agent_version", "model", "env", "command", "source_path", "folder")
    NAME_FIELD_NUMBER: _ClassVar[int]
    DIGEST_FIELD_NUMBER: _ClassVar[int]
    HARNESS_NAME_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    SOURCE_TEXT_FIELD_NUMBER: _ClassVar[int]
    AGENT_FIELD_NUMBER: _ClassVar[int]
    AGENT_VERSION_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    ENV_FIELD_NUMBER: _ClassVar[int]
    COMMAND_FIELD_NUMBER: _ClassVar[int]
    SOURCE_PATH_FIELD_NUMBER: _ClassVar[int]
    FOLDER_FIELD_NUMBER: _ClassVar[int]
    name: str
    digest: str
    harness_name: str
    kind: str
    source_text: str
    agent: str
    agent_version: str
    model: str
    env: _containers.RepeatedScalarFieldContainer[str]
    command: _containers.RepeatedScalarFieldContainer[str]
    source_path: str
    folder: SentFolder
    def __init__(self, name: _Optional[str] = ..., digest: _Optional[str] = ..., harness_name: _Optional[str] = ..., kind: _Optional[str] = ..., source_text: _Optional[str] = ..., agent: _Optional[str] = ..., agent_version: _Optional[str] = ..., model: _Optional[str] = ..., env: _Optional[_Iterable[str]] = ..., command: _Optional[_Iterable[str]] = ..., source_path: _Optional[str] = ..., folder: _Optional[_Union[SentFolder, _Mapping]] = ...) -> None: ...

class RunSpec(_message.Message):
    __slots__ = ("label", "baseline", "attempts", "concurrency", "model", "timeout_secs", "max_infra_retries", "tasks", "exclude", "require", "sandbox", "verifier_env", "verifier_network", "judges", "datasets", "harnesses", "run_file", "sandbox_network", "sandbox_image", "verifier_isolation", "pool", "judge_specs", "allow_history", "history_kept", "history_layer")
    LABEL_FIELD_NUMBER: _ClassVar[int]
    BASELINE_FIELD_NUMBER: _ClassVar[int]
    ATTEMPTS_FIELD_NUMBER: _ClassVar[int]
    CONCURRENCY_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_SECS_FIELD_NUMBER: _ClassVar[int]
    MAX_INFRA_RETRIES_FIELD_NUMBER: _ClassVar[int]
    TASKS_FIELD_NUMBER: _ClassVar[int]
    EXCLUDE_FIELD_NUMBER: _ClassVar[int]
    REQUIRE_FIELD_NUMBER: _ClassVar[int]
    SANDBOX_FIELD_NUMBER: _ClassVar[int]
    VERIFIER_ENV_FIELD_NUMBER: _ClassVar[int]
    VERIFIER_NETWORK_FIELD_NUMBER: _ClassVar[int]
    JUDGES_FIELD_NUMBER: _ClassVar[int]
    DATASETS_FIELD_NUMBER: _ClassVar[int]
    HARNESSES_FIELD_NUMBER: _ClassVar[int]
    RUN_FILE_FIELD_NUMBER: _ClassVar[int]
    SANDBOX_NETWORK_FIELD_NUMBER: _ClassVar[int]
    SANDBOX_IMAGE_FIELD_NUMBER: _ClassVar[int]
    VERIFIER_ISOLATION_FIELD_NUMBER: _ClassVar[int]
    POOL_FIELD_NUMBER: _ClassVar[int]
    JUDGE_SPECS_FIELD_NUMBER: _ClassVar[int]
    ALLOW_HISTORY_FIELD_NUMBER: _ClassVar[int]
    HISTORY_KEPT_FIELD_NUMBER: _ClassVar[int]
    HISTORY_LAYER_FIELD_NUMBER: _ClassVar[int]
    label: str
    baseline: str
    attempts: int
    concurrency: int
    model: str
    timeout_secs: int
    max_infra_retries: int
    tasks: _containers.RepeatedScalarFieldContainer[str]
    exclude: _containers.RepeatedScalarFieldContainer[str]
    require: _containers.RepeatedScalarFieldContainer[str]
    sandbox: str
    verifier_env: _containers.RepeatedScalarFieldContainer[str]
    verifier_network: str
    judges: _containers.RepeatedScalarFieldContainer[str]
    datasets: _containers.RepeatedScalarFieldContainer[str]
    harnesses: _containers.RepeatedScalarFieldContainer[str]
    run_file: str
    sandbox_network: str
    sandbox_image: str
    verifier_isolation: str
    pool: str
    judge_specs: _containers.RepeatedCompositeFieldContainer[JudgeSpec]
    allow_history: _containers.RepeatedScalarFieldContainer[str]
    history_kept: _containers.RepeatedScalarFieldContainer[str]
    history_layer: str
    def __init__(self, label: _Optional[str] = ..., baseline: _Optional[str] = ..., attempts: _Optional[int] = ..., concurrency: _Optional[int] = ..., model: _Optional[str] = ..., timeout_secs: _Optional[int] = ..., max_infra_retries: _Optional[int] = ..., tasks: _Optional[_Iterable[str]] = ..., exclude: _Optional[_Iterable[str]] = ..., require: _Optional[_Iterable[str]] = ..., sandbox: _Optional[str] = ..., verifier_env: _Optional[_Iterable[str]] = ..., verifier_network: _Optional[str] = ..., judges: _Optional[_Iterable[str]] = ..., datasets: _Optional[_Iterable[str]] = ..., harnesses: _Optional[_Iterable[str]] = ..., run_file: _Optional[str] = ..., sandbox_network: _Optional[str] = ..., sandbox_image: _Optional[str] = ..., verifier_isolation: _Optional[str] = ..., pool: _Optional[str] = ..., judge_specs: _Optional[_Iterable[_Union[JudgeSpec, _Mapping]]] = ..., allow_history: _Optional[_Iterable[str]] = ..., history_kept: _Optional[_Iterable[str]] = ..., history_layer: _Optional[str] = ...) -> None: ...

class JudgeSpec(_message.Message):
    __slots__ = ("name", "fingerprint", "definition_json")
    NAME_FIELD_NUMBER: _ClassVar[int]
    FINGERPRINT_FIELD_NUMBER: _ClassVar[int]
    DEFINITION_JSON_FIELD_NUMBER: _ClassVar[int]
    name: str
    fingerprint: str
    definition_json: str
    def __init__(self, name: _Optional[str] = ..., fingerprint: _Optional[str] = ..., definition_json: _Optional[str] = ...) -> None: ...

class JudgeCall(_message.Message):
    __slots__ = ("sample", "retry", "criterion", "request_blob_digest", "response_blob_digest", "http_status", "outcome", "served_model", "latency_ms", "error", "input_tokens", "output_tokens")
    SAMPLE_FIELD_NUMBER: _ClassVar[int]
    RETRY_FIELD_NUMBER: _ClassVar[int]
    CRITERION_FIELD_NUMBER: _ClassVar[int]
    REQUEST_BLOB_DIGEST_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_BLOB_DIGEST_FIELD_NUMBER: _ClassVar[int]
    HTTP_STATUS_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    SERVED_MODEL_FIELD_NUMBER: _ClassVar[int]
    LATENCY_MS_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    INPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    sample: int
    retry: int
    criterion: str
    request_blob_digest: str
    response_blob_digest: str
    http_status: int
    outcome: str
    served_model: str
    latency_ms: int
    error: str
    input_tokens: int
    output_tokens: int
    def __init__(self, sample: _Optional[int] = ..., retry: _Optional[int] = ..., criterion: _Optional[str] = ..., request_blob_digest: _Optional[str] = ..., response_blob_digest: _Optional[str] = ..., http_status: _Optional[int] = ..., outcome: _Optional[str] = ..., served_model: _Optional[str] = ..., latency_ms: _Optional[int] = ..., error: _Optional[str] = ..., input_tokens: _Optional[int] = ..., output_tokens: _Optional[int] = ...) -> None: ...

class Run(_message.Message):
    __slots__ = ("name", "id", "label", "create_time", "spec", "cells", "cancel_requested", "progress", "kind", "import_format", "source", "problem", "provenance", "open_jobs")
    NAME_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    LABEL_FIELD_NUMBER: _ClassVar[int]
    CREATE_TIME_FIELD_NUMBER: _ClassVar[int]
    SPEC_FIELD_NUMBER: _ClassVar[int]
    CELLS_FIELD_NUMBER: _ClassVar[int]
    CANCEL_REQUESTED_FIELD_NUMBER: _ClassVar[int]
    PROGRESS_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    IMPORT_FORMAT_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    PROBLEM_FIELD_NUMBER: _ClassVar[int]
    PROVENANCE_FIELD_NUMBER: _ClassVar[int]
    OPEN_JOBS_FIELD_NUMBER: _ClassVar[int]
    name: str
    id: str
    label: str
    create_time: _timestamp_pb2.Timestamp
    spec: RunSpec
    cells: _containers.RepeatedCompositeFieldContainer[Cell]
    cancel_requested: bool
    progress: RunProgress
    kind: str
    import_format: str
    source: str
    problem: str
    provenance: ImportProvenance
    open_jobs: _containers.RepeatedCompositeFieldContainer[OpenJob]
    def __init__(self, name: _Optional[str] = ..., id: _Optional[str] = ..., label: _Optional[str] = ..., create_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., spec: _Optional[_Union[RunSpec, _Mapping]] = ..., cells: _Optional[_Iterable[_Union[Cell, _Mapping]]] = ..., cancel_requested: _Optional[bool] = ..., progress: _Optional[_Union[RunProgress, _Mapping]] = ..., kind: _Optional[str] = ..., import_format: _Optional[str] = ..., source: _Optional[str] = ..., problem: _Optional[str] = ..., provenance: _Optional[_Union[ImportProvenance, _Mapping]] = ..., open_jobs: _Optional[_Iterable[_Union[OpenJob, _Mapping]]] = ...) -> None: ...

class OpenJob(_message.Message):
    __slots__ = ("id", "attempt_id", "state", "dataset_name", "harness_name", "task_name", "repetition")
    ID_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_ID_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    DATASET_NAME_FIELD_NUMBER: _ClassVar[int]
    HARNESS_NAME_FIELD_NUMBER: _ClassVar[int]
    TASK_NAME_FIELD_NUMBER: _ClassVar[int]
    REPETITION_FIELD_NUMBER: _ClassVar[int]
    id: str
    attempt_id: str
    state: str
    dataset_name: str
    harness_name: str
    task_name: str
    repetition: int
    def __init__(self, id: _Optional[str] = ..., attempt_id: _Optional[str] = ..., state: _Optional[str] = ..., dataset_name: _Optional[str] = ..., harness_name: _Optional[str] = ..., task_name: _Optional[str] = ..., repetition: _Optional[int] = ...) -> None: ...

class ImportProvenance(_message.Message):
    __slots__ = ("export_digest", "imported_by", "import_time", "original_id", "original_kind", "original_label")
    EXPORT_DIGEST_FIELD_NUMBER: _ClassVar[int]
    IMPORTED_BY_FIELD_NUMBER: _ClassVar[int]
    IMPORT_TIME_FIELD_NUMBER: _ClassVar[int]
    ORIGINAL_ID_FIELD_NUMBER: _ClassVar[int]
    ORIGINAL_KIND_FIELD_NUMBER: _ClassVar[int]
    ORIGINAL_LABEL_FIELD_NUMBER: _ClassVar[int]
    export_digest: str
    imported_by: str
    import_time: _timestamp_pb2.Timestamp
    original_id: str
    original_kind: str
    original_label: str
    def __init__(self, export_digest: _Optional[str] = ..., imported_by: _Optional[str] = ..., import_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., original_id: _Optional[str] = ..., original_kind: _Optional[str] = ..., original_label: _Optional[str] = ...) -> None: ...

class Cell(_message.Message):
    __slots__ = ("id", "dataset_name", "dataset_digest", "harness_name", "harness_digest", "model", "progress")
    ID_FIELD_NUMBER: _ClassVar[int]
    DATASET_NAME_FIELD_NUMBER: _ClassVar[int]
    DATASET_DIGEST_FIELD_NUMBER: _ClassVar[int]
    HARNESS_NAME_FIELD_NUMBER: _ClassVar[int]
    HARNESS_DIGEST_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    PROGRESS_FIELD_NUMBER: _ClassVar[int]
    id: str
    dataset_name: str
    dataset_digest: str
    harness_name: str
    harness_digest: str
    model: str
    progress: RunProgress
    def __init__(self, id: _Optional[str] = ..., dataset_name: _Optional[str] = ..., dataset_digest: _Optional[str] = ..., harness_name: _Optional[str] = ..., harness_digest: _Optional[str] = ..., model: _Optional[str] = ..., progress: _Optional[_Union[RunProgress, _Mapping]] = ...) -> None: ...

class RunProgress(_message.Message):
    __slots__ = ("trials", "queued", "running", "done", "passed", "failed", "errored", "cancelled", "unreadable")
    TRIALS_FIELD_NUMBER: _ClassVar[int]
    QUEUED_FIELD_NUMBER: _ClassVar[int]
    RUNNING_FIELD_NUMBER: _ClassVar[int]
    DONE_FIELD_NUMBER: _ClassVar[int]
    PASSED_FIELD_NUMBER: _ClassVar[int]
    FAILED_FIELD_NUMBER: _ClassVar[int]
    ERRORED_FIELD_NUMBER: _ClassVar[int]
    CANCELLED_FIELD_NUMBER: _ClassVar[int]
    UNREADABLE_FIELD_NUMBER: _ClassVar[int]
    trials: int
    queued: int
    running: int
    done: int
    passed: int
    failed: int
    errored: int
    cancelled: int
    unreadable: int
    def __init__(self, trials: _Optional[int] = ..., queued: _Optional[int] = ..., running: _Optional[int] = ..., done: _Optional[int] = ..., passed: _Optional[int] = ..., failed: _Optional[int] = ..., errored: _Optional[int] = ..., cancelled: _Optional[int] = ..., unreadable: _Optional[int] = ...) -> None: ...

class Attempt(_message.Message):
    __slots__ = ("name", "id", "run_id", "trial_id", "cell_id", "task_digest", "task_name", "repetition", "number", "state", "outcome", "exit_code", "error", "start_time", "end_time", "score", "artifacts", "agent_version", "model", "harness_name", "dataset_name", "event_count", "verdict", "judge_scores", "usage", "usage_observed", "usage_differs", "problem", "job_id")
    NAME_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    TRIAL_ID_FIELD_NUMBER: _ClassVar[int]
    CELL_ID_FIELD_NUMBER: _ClassVar[int]
    TASK_DIGEST_FIELD_NUMBER: _ClassVar[int]
    TASK_NAME_FIELD_NUMBER: _ClassVar[int]
    REPETITION_FIELD_NUMBER: _ClassVar[int]
    NUMBER_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    EXIT_CODE_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    START_TIME_FIELD_NUMBER: _ClassVar[int]
    END_TIME_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    ARTIFACTS_FIELD_NUMBER: _ClassVar[int]
    AGENT_VERSION_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    HARNESS_NAME_FIELD_NUMBER: _ClassVar[int]
    DATASET_NAME_FIELD_NUMBER: _ClassVar[int]
    EVENT_COUNT_FIELD_NUMBER: _ClassVar[int]
    VERDICT_FIELD_NUMBER: _ClassVar[int]
    JUDGE_SCORES_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    USAGE_OBSERVED_FIELD_NUMBER: _ClassVar[int]
    USAGE_DIFFERS_FIELD_NUMBER: _ClassVar[int]
    PROBLEM_FIELD_NUMBER: _ClassVar[int]
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    name: str
    id: str
    run_id: str
    trial_id: str
    cell_id: str
    task_digest: str
    task_name: str
    repetition: int
    number: int
    state: AttemptState
    outcome: Outcome
    exit_code: int
    error: str
    start_time: _timestamp_pb2.Timestamp
    end_time: _timestamp_pb2.Timestamp
    score: Score
    artifacts: _containers.RepeatedCompositeFieldContainer[Artifact]
    agent_version: str
    model: str
    harness_name: str
    dataset_name: str
    event_count: int
    verdict: str
    judge_scores: _containers.RepeatedCompositeFieldContainer[Score]
    usage: ReportedUsage
    usage_observed: ObservedUsage
    usage_differs: bool
    problem: str
    job_id: str
    def __init__(self, name: _Optional[str] = ..., id: _Optional[str] = ..., run_id: _Optional[str] = ..., trial_id: _Optional[str] = ..., cell_id: _Optional[str] = ..., task_digest: _Optional[str] = ..., task_name: _Optional[str] = ..., repetition: _Optional[int] = ..., number: _Optional[int] = ..., state: _Optional[_Union[AttemptState, str]] = ..., outcome: _Optional[_Union[Outcome, str]] = ..., exit_code: _Optional[int] = ..., error: _Optional[str] = ..., start_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., end_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., score: _Optional[_Union[Score, _Mapping]] = ..., artifacts: _Optional[_Iterable[_Union[Artifact, _Mapping]]] = ..., agent_version: _Optional[str] = ..., model: _Optional[str] = ..., harness_name: _Optional[str] = ..., dataset_name: _Optional[str] = ..., event_count: _Optional[int] = ..., verdict: _Optional[str] = ..., judge_scores: _Optional[_Iterable[_Union[Score, _Mapping]]] = ..., usage: _Optional[_Union[ReportedUsage, _Mapping]] = ..., usage_observed: _Optional[_Union[ObservedUsage, _Mapping]] = ..., usage_differs: _Optional[bool] = ..., problem: _Optional[str] = ..., job_id: _Optional[str] = ...) -> None: ...

class ReportedUsage(_message.Message):
    __slots__ = ("input_tokens", "output_tokens", "cost_usd", "usage_events")
    INPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    COST_USD_FIELD_NUMBER: _ClassVar[int]
    USAGE_EVENTS_FIELD_NUMBER: _ClassVar[int]
    input_tokens: int
    output_tokens: int
    cost_usd: float
    usage_events: int
    def __init__(self, input_tokens: _Optional[int] = ..., output_tokens: _Optional[int] = ..., cost_usd: _Optional[float] = ..., usage_events: _Optional[int] = ...) -> None: ...

class ObservedUsage(_message.Message):
    __slots__ = ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens", "model_calls", "unreadable", "events")
    INPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    CACHE_READ_INPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    CACHE_CREATION_INPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    MODEL_CALLS_FIELD_NUMBER: _ClassVar[int]
    UNREADABLE_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    input_tokens: int
    output_tokens: int
    cache_read_input_tokens: int
    cache_creation_input_tokens: int
    model_calls: int
    unreadable: int
    events: int
    def __init__(self, input_tokens: _Optional[int] = ..., output_tokens: _Optional[int] = ..., cache_read_input_tokens: _Optional[int] = ..., cache_creation_input_tokens: _Optional[int] = ..., model_calls: _Optional[int] = ..., unreadable: _Optional[int] = ..., events: _Optional[int] = ...) -> None: ...

class Artifact(_message.Message):
    __slots__ = ("path", "blob_digest", "size_bytes")
    PATH_FIELD_NUMBER: _ClassVar[int]
    BLOB_DIGEST_FIELD_NUMBER: _ClassVar[int]
    SIZE_BYTES_FIELD_NUMBER: _ClassVar[int]
    path: str
    blob_digest: str
    size_bytes: int
    def __init__(self, path: _Optional[str] = ..., blob_digest: _Optional[str] = ..., size_bytes: _Optional[int] = ...) -> None: ...

class Score(_message.Message):
    __slots__ = ("state", "rewards", "scorer_fingerprint", "scorer", "error", "stdout_blob_digest", "duration", "judge_model", "judgments", "judge_calls", "judge", "judged_time", "fault")
    class RewardsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: float
        def __init__(self, key: _Optional[str] = ..., value: _Optional[float] = ...) -> None: ...
    STATE_FIELD_NUMBER: _ClassVar[int]
    REWARDS_FIELD_NUMBER: _ClassVar[int]
    SCORER_FINGERPRINT_FIELD_NUMBER: _ClassVar[int]
    SCORER_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    STDOUT_BLOB_DIGEST_FIELD_NUMBER: _ClassVar[int]
    DURATION_FIELD_NUMBER: _ClassVar[int]
    JUDGE_MODEL_FIELD_NUMBER: _ClassVar[int]
    JUDGMENTS_FIELD_NUMBER: _ClassVar[int]
    JUDGE_CALLS_FIELD_NUMBER: _ClassVar[int]
    JUDGE_FIELD_NUMBER: _ClassVar[int]
    JUDGED_TIME_FIELD_NUMBER: _ClassVar[int]
    FAULT_FIELD_NUMBER: _ClassVar[int]
    state: ScoreState
    rewards: _containers.ScalarMap[str, float]
    scorer_fingerprint: str
    scorer: str
    error: str
    stdout_blob_digest: str
    duration: _duration_pb2.Duration
    judge_model: str
    judgments: _containers.RepeatedCompositeFieldContainer[Judgment]
    judge_calls: _containers.RepeatedCompositeFieldContainer[JudgeCall]
    judge: str
    judged_time: _timestamp_pb2.Timestamp
    fault: str
    def __init__(self, state: _Optional[_Union[ScoreState, str]] = ..., rewards: _Optional[_Mapping[str, float]] = ..., scorer_fingerprint: _Optional[str] = ..., scorer: _Optional[str] = ..., error: _Optional[str] = ..., stdout_blob_digest: _Optional[str] = ..., duration: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., judge_model: _Optional[str] = ..., judgments: _Optional[_Iterable[_Union[Judgment, _Mapping]]] = ..., judge_calls: _Optional[_Iterable[_Union[JudgeCall, _Mapping]]] = ..., judge: _Optional[str] = ..., judged_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., fault: _Optional[str] = ...) -> None: ...

class Judgment(_message.Message):
    __slots__ = ("judge", "source", "criterion", "description", "value", "raw_json", "weight", "passed", "expected", "observed", "reason", "judge_model", "error", "agreement", "sample_raw_json")
    JUDGE_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    CRITERION_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    RAW_JSON_FIELD_NUMBER: _ClassVar[int]
    WEIGHT_FIELD_NUMBER: _ClassVar[int]
    PASSED_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_FIELD_NUMBER: _ClassVar[int]
    OBSERVED_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    JUDGE_MODEL_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    AGREEMENT_FIELD_NUMBER: _ClassVar[int]
    SAMPLE_RAW_JSON_FIELD_NUMBER: _ClassVar[int]
    judge: str
    source: str
    criterion: str
    description: str
    value: float
    raw_json: str
    weight: float
    passed: bool
    expected: str
    observed: str
    reason: str
    judge_model: str
    error: str
    agreement: float
    sample_raw_json: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, judge: _Optional[str] = ..., source: _Optional[str] = ..., criterion: _Optional[str] = ..., description: _Optional[str] = ..., value: _Optional[float] = ..., raw_json: _Optional[str] = ..., weight: _Optional[float] = ..., passed: _Optional[bool] = ..., expected: _Optional[str] = ..., observed: _Optional[str] = ..., reason: _Optional[str] = ..., judge_model: _Optional[str] = ..., error: _Optional[str] = ..., agreement: _Optional[float] = ..., sample_raw_json: _Optional[_Iterable[str]] = ...) -> None: ...

class Event(_message.Message):
    __slots__ = ("seq", "time", "type", "name", "payload_json", "duration", "payload_bytes", "payload_cut")
    SEQ_FIELD_NUMBER: _ClassVar[int]
    TIME_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    PAYLOAD_JSON_FIELD_NUMBER: _ClassVar[int]
    DURATION_FIELD_NUMBER: _ClassVar[int]
    PAYLOAD_BYTES_FIELD_NUMBER: _ClassVar[int]
    PAYLOAD_CUT_FIELD_NUMBER: _ClassVar[int]
    seq: int
    time: _timestamp_pb2.Timestamp
    type: str
    name: str
    payload_json: str
    duration: _duration_pb2.Duration
    payload_bytes: int
    payload_cut: bool
    def __init__(self, seq: _Optional[int] = ..., time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., type: _Optional[str] = ..., name: _Optional[str] = ..., payload_json: _Optional[str] = ..., duration: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., payload_bytes: _Optional[int] = ..., payload_cut: _Optional[bool] = ...) -> None: ...

class SentFolder(_message.Message):
    __slots__ = ("ref", "tree_digest", "name", "file")
    REF_FIELD_NUMBER: _ClassVar[int]
    TREE_DIGEST_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    FILE_FIELD_NUMBER: _ClassVar[int]
    ref: str
    tree_digest: str
    name: str
    file: str
    def __init__(self, ref: _Optional[str] = ..., tree_digest: _Optional[str] = ..., name: _Optional[str] = ..., file: _Optional[str] = ...) -> None: ...
