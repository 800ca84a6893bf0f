import datetime

from google.protobuf import duration_pb2 as _duration_pb2
from hemra.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class FinishStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    FINISH_STATUS_UNSPECIFIED: _ClassVar[FinishStatus]
    FINISH_STATUS_COMPLETED: _ClassVar[FinishStatus]
    FINISH_STATUS_FAILED: _ClassVar[FinishStatus]
FINISH_STATUS_UNSPECIFIED: FinishStatus
FINISH_STATUS_COMPLETED: FinishStatus
FINISH_STATUS_FAILED: FinishStatus

class GetTrialRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class GetTrialResponse(_message.Message):
    __slots__ = ("attempt_id", "instruction", "task_name", "model", "timeout", "workdir")
    ATTEMPT_ID_FIELD_NUMBER: _ClassVar[int]
    INSTRUCTION_FIELD_NUMBER: _ClassVar[int]
    TASK_NAME_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_FIELD_NUMBER: _ClassVar[int]
    WORKDIR_FIELD_NUMBER: _ClassVar[int]
    attempt_id: str
    instruction: str
    task_name: str
    model: str
    timeout: _duration_pb2.Duration
    workdir: str
    def __init__(self, attempt_id: _Optional[str] = ..., instruction: _Optional[str] = ..., task_name: _Optional[str] = ..., model: _Optional[str] = ..., timeout: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., workdir: _Optional[str] = ...) -> None: ...

class RunCommandRequest(_message.Message):
    __slots__ = ("command", "cwd", "env", "timeout", "stdin")
    class EnvEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    COMMAND_FIELD_NUMBER: _ClassVar[int]
    CWD_FIELD_NUMBER: _ClassVar[int]
    ENV_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_FIELD_NUMBER: _ClassVar[int]
    STDIN_FIELD_NUMBER: _ClassVar[int]
    command: str
    cwd: str
    env: _containers.ScalarMap[str, str]
    timeout: _duration_pb2.Duration
    stdin: bytes
    def __init__(self, command: _Optional[str] = ..., cwd: _Optional[str] = ..., env: _Optional[_Mapping[str, str]] = ..., timeout: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., stdin: _Optional[bytes] = ...) -> None: ...

class RunCommandResponse(_message.Message):
    __slots__ = ("exit_code", "stdout", "stderr", "timed_out", "duration")
    EXIT_CODE_FIELD_NUMBER: _ClassVar[int]
    STDOUT_FIELD_NUMBER: _ClassVar[int]
    STDERR_FIELD_NUMBER: _ClassVar[int]
    TIMED_OUT_FIELD_NUMBER: _ClassVar[int]
    DURATION_FIELD_NUMBER: _ClassVar[int]
    exit_code: int
    stdout: bytes
    stderr: bytes
    timed_out: bool
    duration: _duration_pb2.Duration
    def __init__(self, exit_code: _Optional[int] = ..., stdout: _Optional[bytes] = ..., stderr: _Optional[bytes] = ..., timed_out: _Optional[bool] = ..., duration: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ...) -> None: ...

class ReadFileRequest(_message.Message):
    __slots__ = ("path", "limit")
    PATH_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    path: str
    limit: int
    def __init__(self, path: _Optional[str] = ..., limit: _Optional[int] = ...) -> None: ...

class ReadFileResponse(_message.Message):
    __slots__ = ("content", "size_bytes")
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    SIZE_BYTES_FIELD_NUMBER: _ClassVar[int]
    content: bytes
    size_bytes: int
    def __init__(self, content: _Optional[bytes] = ..., size_bytes: _Optional[int] = ...) -> None: ...

class ReadFilesRequest(_message.Message):
    __slots__ = ("files",)
    FILES_FIELD_NUMBER: _ClassVar[int]
    files: _containers.RepeatedCompositeFieldContainer[ReadFileRequest]
    def __init__(self, files: _Optional[_Iterable[_Union[ReadFileRequest, _Mapping]]] = ...) -> None: ...

class FileRead(_message.Message):
    __slots__ = ("path", "found", "content", "size_bytes")
    PATH_FIELD_NUMBER: _ClassVar[int]
    FOUND_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    SIZE_BYTES_FIELD_NUMBER: _ClassVar[int]
    path: str
    found: bool
    content: bytes
    size_bytes: int
    def __init__(self, path: _Optional[str] = ..., found: _Optional[bool] = ..., content: _Optional[bytes] = ..., size_bytes: _Optional[int] = ...) -> None: ...

class ReadFilesResponse(_message.Message):
    __slots__ = ("files",)
    FILES_FIELD_NUMBER: _ClassVar[int]
    files: _containers.RepeatedCompositeFieldContainer[FileRead]
    def __init__(self, files: _Optional[_Iterable[_Union[FileRead, _Mapping]]] = ...) -> None: ...

class FileContent(_message.Message):
    __slots__ = ("path", "content", "executable")
    PATH_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    EXECUTABLE_FIELD_NUMBER: _ClassVar[int]
    path: str
    content: bytes
    executable: bool
    def __init__(self, path: _Optional[str] = ..., content: _Optional[bytes] = ..., executable: _Optional[bool] = ...) -> None: ...

class WriteFilesRequest(_message.Message):
    __slots__ = ("files",)
    FILES_FIELD_NUMBER: _ClassVar[int]
    files: _containers.RepeatedCompositeFieldContainer[FileContent]
    def __init__(self, files: _Optional[_Iterable[_Union[FileContent, _Mapping]]] = ...) -> None: ...

class WriteFilesResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class RemovePathRequest(_message.Message):
    __slots__ = ("path",)
    PATH_FIELD_NUMBER: _ClassVar[int]
    path: str
    def __init__(self, path: _Optional[str] = ...) -> None: ...

class RemovePathResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class EmitEventsRequest(_message.Message):
    __slots__ = ("events",)
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    events: _containers.RepeatedCompositeFieldContainer[_common_pb2.Event]
    def __init__(self, events: _Optional[_Iterable[_Union[_common_pb2.Event, _Mapping]]] = ...) -> None: ...

class EmitEventsResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class FinishRequest(_message.Message):
    __slots__ = ("status", "message", "agent_version")
    STATUS_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    AGENT_VERSION_FIELD_NUMBER: _ClassVar[int]
    status: FinishStatus
    message: str
    agent_version: str
    def __init__(self, status: _Optional[_Union[FinishStatus, str]] = ..., message: _Optional[str] = ..., agent_version: _Optional[str] = ...) -> None: ...

class FinishResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...
