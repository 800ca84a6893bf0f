from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable
from typing import ClassVar as _ClassVar, Optional as _Optional

DESCRIPTOR: _descriptor.FileDescriptor

class GetExecutorStatusRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class GetExecutorStatusResponse(_message.Message):
    __slots__ = ("worker", "concurrency", "active_attempts", "completed_jobs", "sandboxes")
    WORKER_FIELD_NUMBER: _ClassVar[int]
    CONCURRENCY_FIELD_NUMBER: _ClassVar[int]
    ACTIVE_ATTEMPTS_FIELD_NUMBER: _ClassVar[int]
    COMPLETED_JOBS_FIELD_NUMBER: _ClassVar[int]
    SANDBOXES_FIELD_NUMBER: _ClassVar[int]
    worker: str
    concurrency: int
    active_attempts: _containers.RepeatedScalarFieldContainer[str]
    completed_jobs: int
    sandboxes: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, worker: _Optional[str] = ..., concurrency: _Optional[int] = ..., active_attempts: _Optional[_Iterable[str]] = ..., completed_jobs: _Optional[int] = ..., sandboxes: _Optional[_Iterable[str]] = ...) -> None: ...
