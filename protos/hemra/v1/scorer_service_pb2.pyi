from hemra.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class JudgeAttemptRequest(_message.Message):
    __slots__ = ("attempt", "task", "artifacts", "judges")
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    TASK_FIELD_NUMBER: _ClassVar[int]
    ARTIFACTS_FIELD_NUMBER: _ClassVar[int]
    JUDGES_FIELD_NUMBER: _ClassVar[int]
    attempt: str
    task: _common_pb2.Task
    artifacts: _containers.RepeatedCompositeFieldContainer[_common_pb2.Artifact]
    judges: _containers.RepeatedCompositeFieldContainer[_common_pb2.JudgeSpec]
    def __init__(self, attempt: _Optional[str] = ..., task: _Optional[_Union[_common_pb2.Task, _Mapping]] = ..., artifacts: _Optional[_Iterable[_Union[_common_pb2.Artifact, _Mapping]]] = ..., judges: _Optional[_Iterable[_Union[_common_pb2.JudgeSpec, _Mapping]]] = ...) -> None: ...

class JudgeAttemptResponse(_message.Message):
    __slots__ = ("scores",)
    SCORES_FIELD_NUMBER: _ClassVar[int]
    scores: _containers.RepeatedCompositeFieldContainer[_common_pb2.Score]
    def __init__(self, scores: _Optional[_Iterable[_Union[_common_pb2.Score, _Mapping]]] = ...) -> None: ...

class JudgeRunRequest(_message.Message):
    __slots__ = ("run", "judge", "only_missing")
    RUN_FIELD_NUMBER: _ClassVar[int]
    JUDGE_FIELD_NUMBER: _ClassVar[int]
    ONLY_MISSING_FIELD_NUMBER: _ClassVar[int]
    run: str
    judge: _common_pb2.JudgeSpec
    only_missing: bool
    def __init__(self, run: _Optional[str] = ..., judge: _Optional[_Union[_common_pb2.JudgeSpec, _Mapping]] = ..., only_missing: _Optional[bool] = ...) -> None: ...

class JudgeRunResponse(_message.Message):
    __slots__ = ("run_id", "judged", "failed", "skipped")
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    JUDGED_FIELD_NUMBER: _ClassVar[int]
    FAILED_FIELD_NUMBER: _ClassVar[int]
    SKIPPED_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    judged: int
    failed: int
    skipped: int
    def __init__(self, run_id: _Optional[str] = ..., judged: _Optional[int] = ..., failed: _Optional[int] = ..., skipped: _Optional[int] = ...) -> None: ...

class ScoreAttemptRequest(_message.Message):
    __slots__ = ("attempt", "task", "sandbox_address", "sandbox_token", "verifier_env")
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    TASK_FIELD_NUMBER: _ClassVar[int]
    SANDBOX_ADDRESS_FIELD_NUMBER: _ClassVar[int]
    SANDBOX_TOKEN_FIELD_NUMBER: _ClassVar[int]
    VERIFIER_ENV_FIELD_NUMBER: _ClassVar[int]
    attempt: str
    task: _common_pb2.Task
    sandbox_address: str
    sandbox_token: str
    verifier_env: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, attempt: _Optional[str] = ..., task: _Optional[_Union[_common_pb2.Task, _Mapping]] = ..., sandbox_address: _Optional[str] = ..., sandbox_token: _Optional[str] = ..., verifier_env: _Optional[_Iterable[str]] = ...) -> None: ...

class ScoreAttemptResponse(_message.Message):
    __slots__ = ("score",)
    SCORE_FIELD_NUMBER: _ClassVar[int]
    score: _common_pb2.Score
    def __init__(self, score: _Optional[_Union[_common_pb2.Score, _Mapping]] = ...) -> None: ...
