from hemra.v1 import common_pb2 as _common_pb2
from hemra.v1 import store_service_pb2 as _store_service_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class AuditDatasetRequest(_message.Message):
    __slots__ = ("ref", "tasks", "allow_history")
    REF_FIELD_NUMBER: _ClassVar[int]
    TASKS_FIELD_NUMBER: _ClassVar[int]
    ALLOW_HISTORY_FIELD_NUMBER: _ClassVar[int]
    ref: str
    tasks: _containers.RepeatedScalarFieldContainer[str]
    allow_history: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, ref: _Optional[str] = ..., tasks: _Optional[_Iterable[str]] = ..., allow_history: _Optional[_Iterable[str]] = ...) -> None: ...

class AuditDatasetResponse(_message.Message):
    __slots__ = ("audit",)
    AUDIT_FIELD_NUMBER: _ClassVar[int]
    audit: _store_service_pb2.DatasetAudit
    def __init__(self, audit: _Optional[_Union[_store_service_pb2.DatasetAudit, _Mapping]] = ...) -> None: ...

class PinDatasetRequest(_message.Message):
    __slots__ = ("ref", "allow_head")
    REF_FIELD_NUMBER: _ClassVar[int]
    ALLOW_HEAD_FIELD_NUMBER: _ClassVar[int]
    ref: str
    allow_head: bool
    def __init__(self, ref: _Optional[str] = ..., allow_head: _Optional[bool] = ...) -> None: ...

class PinDatasetResponse(_message.Message):
    __slots__ = ("dataset", "origin_json")
    DATASET_FIELD_NUMBER: _ClassVar[int]
    ORIGIN_JSON_FIELD_NUMBER: _ClassVar[int]
    dataset: _common_pb2.Dataset
    origin_json: str
    def __init__(self, dataset: _Optional[_Union[_common_pb2.Dataset, _Mapping]] = ..., origin_json: _Optional[str] = ...) -> None: ...

class PinTasksRequest(_message.Message):
    __slots__ = ("paths",)
    PATHS_FIELD_NUMBER: _ClassVar[int]
    paths: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, paths: _Optional[_Iterable[str]] = ...) -> None: ...

class PinnedTask(_message.Message):
    __slots__ = ("path", "task", "error", "harbor_digest")
    PATH_FIELD_NUMBER: _ClassVar[int]
    TASK_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    HARBOR_DIGEST_FIELD_NUMBER: _ClassVar[int]
    path: str
    task: _common_pb2.Task
    error: str
    harbor_digest: str
    def __init__(self, path: _Optional[str] = ..., task: _Optional[_Union[_common_pb2.Task, _Mapping]] = ..., error: _Optional[str] = ..., harbor_digest: _Optional[str] = ...) -> None: ...

class PinTasksResponse(_message.Message):
    __slots__ = ("tasks",)
    TASKS_FIELD_NUMBER: _ClassVar[int]
    tasks: _containers.RepeatedCompositeFieldContainer[PinnedTask]
    def __init__(self, tasks: _Optional[_Iterable[_Union[PinnedTask, _Mapping]]] = ...) -> None: ...

class PlanRunRequest(_message.Message):
    __slots__ = ("spec", "folders", "request_id", "loose")
    SPEC_FIELD_NUMBER: _ClassVar[int]
    FOLDERS_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    LOOSE_FIELD_NUMBER: _ClassVar[int]
    spec: _common_pb2.RunSpec
    folders: _containers.RepeatedCompositeFieldContainer[_common_pb2.SentFolder]
    request_id: str
    loose: bool
    def __init__(self, spec: _Optional[_Union[_common_pb2.RunSpec, _Mapping]] = ..., folders: _Optional[_Iterable[_Union[_common_pb2.SentFolder, _Mapping]]] = ..., request_id: _Optional[str] = ..., loose: _Optional[bool] = ...) -> None: ...

class PlanRunResponse(_message.Message):
    __slots__ = ("run",)
    RUN_FIELD_NUMBER: _ClassVar[int]
    run: _common_pb2.Run
    def __init__(self, run: _Optional[_Union[_common_pb2.Run, _Mapping]] = ...) -> None: ...

class ResolveRunRequest(_message.Message):
    __slots__ = ("spec", "folders")
    SPEC_FIELD_NUMBER: _ClassVar[int]
    FOLDERS_FIELD_NUMBER: _ClassVar[int]
    spec: _common_pb2.RunSpec
    folders: _containers.RepeatedCompositeFieldContainer[_common_pb2.SentFolder]
    def __init__(self, spec: _Optional[_Union[_common_pb2.RunSpec, _Mapping]] = ..., folders: _Optional[_Iterable[_Union[_common_pb2.SentFolder, _Mapping]]] = ...) -> None: ...

class ResolveRunResponse(_message.Message):
    __slots__ = ("datasets", "harnesses", "trials")
    DATASETS_FIELD_NUMBER: _ClassVar[int]
    HARNESSES_FIELD_NUMBER: _ClassVar[int]
    TRIALS_FIELD_NUMBER: _ClassVar[int]
    datasets: _containers.RepeatedCompositeFieldContainer[_common_pb2.Dataset]
    harnesses: _containers.RepeatedCompositeFieldContainer[_common_pb2.Harness]
    trials: int
    def __init__(self, datasets: _Optional[_Iterable[_Union[_common_pb2.Dataset, _Mapping]]] = ..., harnesses: _Optional[_Iterable[_Union[_common_pb2.Harness, _Mapping]]] = ..., trials: _Optional[int] = ...) -> None: ...
