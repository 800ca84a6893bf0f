from hemra.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ScoreAttemptRequest(_message.Message):
    __slots__ = ("attempt_id", "task", "sandbox_address", "sandbox_token", "verifier_env")
    ATTEMPT_ID_FIELD_NUMBER: _ClassVar[int]
    TASK_FIELD_NUMBER: _ClassVar[int]
    SANDBOX_ADDRESS_FIELD_NUMBER: _ClassVar[int]
    SANDBOX_TOKEN_FIELD_NUMBER: _ClassVar[int]
    VERIFIER_ENV_FIELD_NUMBER: _ClassVar[int]
    attempt_id: str
    task: _common_pb2.Task
    sandbox_address: str
    sandbox_token: str
    verifier_env: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, attempt_id: _Optional[str] = ..., task: _Optional[_Union[_common_pb2.Task, _Mapping]] = ..., sandbox_address: _Optional[str] = ..., sandbox_token: _Optional[str] = ..., verifier_env: _Optional[_Iterable[str]] = ...) -> None: ...

class ScoreAttemptResponse(_message.Message):
    __slots__ = ("score",)
    SCORE_FIELD_NUMBER: _ClassVar[int]
    score: _common_pb2.Score
    def __init__(self, score: _Optional[_Union[_common_pb2.Score, _Mapping]] = ...) -> None: ...
