from hemra.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ImportResultsRequest(_message.Message):
    __slots__ = ("path", "label", "swebench_version", "tasks_dir", "folder")
    PATH_FIELD_NUMBER: _ClassVar[int]
    LABEL_FIELD_NUMBER: _ClassVar[int]
    SWEBENCH_VERSION_FIELD_NUMBER: _ClassVar[int]
    TASKS_DIR_FIELD_NUMBER: _ClassVar[int]
    FOLDER_FIELD_NUMBER: _ClassVar[int]
    path: str
    label: str
    swebench_version: str
    tasks_dir: str
    folder: _common_pb2.SentFolder
    def __init__(self, path: _Optional[str] = ..., label: _Optional[str] = ..., swebench_version: _Optional[str] = ..., tasks_dir: _Optional[str] = ..., folder: _Optional[_Union[_common_pb2.SentFolder, _Mapping]] = ...) -> None: ...

class ImportResultsResponse(_message.Message):
    __slots__ = ("import_id", "warnings")
    IMPORT_ID_FIELD_NUMBER: _ClassVar[int]
    WARNINGS_FIELD_NUMBER: _ClassVar[int]
    import_id: str
    warnings: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, import_id: _Optional[str] = ..., warnings: _Optional[_Iterable[str]] = ...) -> None: ...
