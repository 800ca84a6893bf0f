"""HTTP response models, converted from the store's protobuf messages in one place.

Models are derived from the proto descriptors, so a field keeps its proto name
over HTTP. Int64 stays a number, a Timestamp is RFC 3339 text, a Duration is
seconds, and an enum is its lower-case short name (`OUTCOME_HARNESS_FAILED` ->
`harness_failed`).
"""

import json
from functools import cache
from typing import Any

import msgspec
from fastapi import responses
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from pydantic import BaseModel, Field, create_model

from hemra.services.domain.vocabulary import short_name
from hemra.v1 import common_pb2 as pb
from hemra.v1 import store_service_pb2 as spb

#: Strings longer than this are shortened in event previews (by default).
PREVIEW_CHARS = 300
#: Lists longer than this keep their first items in previews.
PREVIEW_ITEMS = 50
#: Deeper values are cut in previews.
PREVIEW_DEPTH = 12
ELLIPSIS = "…"

_SCALARS = {
    FieldDescriptor.TYPE_DOUBLE: float,
    FieldDescriptor.TYPE_FLOAT: float,
    FieldDescriptor.TYPE_INT64: int,
    FieldDescriptor.TYPE_UINT64: int,
    FieldDescriptor.TYPE_INT32: int,
    FieldDescriptor.TYPE_UINT32: int,
    FieldDescriptor.TYPE_SINT32: int,
    FieldDescriptor.TYPE_SINT64: int,
    FieldDescriptor.TYPE_FIXED32: int,
    FieldDescriptor.TYPE_FIXED64: int,
    FieldDescriptor.TYPE_BOOL: bool,
    FieldDescriptor.TYPE_STRING: str,
}
_TIMESTAMP = "google.protobuf.Timestamp"
_DURATION = "google.protobuf.Duration"


def _is_map(field: FieldDescriptor) -> bool:
    return field.message_type is not None and field.message_type.GetOptions().map_entry


def _is_repeated(field: FieldDescriptor) -> bool:
    if hasattr(field, "is_repeated"):
        return field.is_repeated
    return field.label == FieldDescriptor.LABEL_REPEATED


def _field_type(field: FieldDescriptor, optional: bool = True):
    if field.type == FieldDescriptor.TYPE_ENUM:
        return str
    if field.type == FieldDescriptor.TYPE_MESSAGE:
        name = field.message_type.full_name
        if name == _TIMESTAMP:
            return str | None
        if name == _DURATION:
            return float | None
        model = model_of(field.message_type)
        return model | None if optional else model
    return _SCALARS[field.type]


@cache
def model_of(descriptor: Descriptor, skip: tuple[str, ...] = ()) -> type[BaseModel]:
    """A pydantic model with the message's fields (minus `skip`)."""
    fields = {}
    for field in descriptor.fields:
        if field.name in skip or field.type == FieldDescriptor.TYPE_BYTES:
            continue
        if _is_map(field):
            value = field.message_type.fields_by_name["value"]
            key = _SCALARS[field.message_type.fields_by_name["key"].type]
            fields[field.name] = (dict[key, _field_type(value)], Field(default_factory=dict))
        elif _is_repeated(field):
            fields[field.name] = (list[_field_type(field, optional=False)], Field(default_factory=list))
        else:
            fields[field.name] = (_field_type(field), None)
    return create_model(descriptor.name, **fields)


class JSONResponse(responses.JSONResponse):
    """FastAPI's JSONResponse encoded by msgspec: the same compact UTF-8 JSON, several times
    faster than json.dumps on a page of 200 attempts."""

    def render(self, content) -> bytes:
        return msgspec.json.encode(content)


def to_json(message, skip: tuple[str, ...] = ()) -> dict:
    """Every field of `message` (defaults included), shaped as `model_of` describes."""
    data = {}
    for name, value_of in _plan(message.DESCRIPTOR):
        if name not in skip:
            data[name] = value_of(message)
    return data


@cache
def _plan(descriptor: Descriptor) -> tuple:
    """(field name, message -> its JSON value) for each field to_json writes, worked out once per
    message type: a page of 200 attempts converts many thousand fields."""
    return tuple((f.name, _reader(f)) for f in descriptor.fields if f.type != FieldDescriptor.TYPE_BYTES)


def _reader(field: FieldDescriptor):
    name = field.name
    if _is_map(field):
        convert = _converter(field.message_type.fields_by_name["value"])
        if convert is None:
            return lambda m: dict(getattr(m, name))
        return lambda m: {k: convert(v) for k, v in getattr(m, name).items()}
    convert = _converter(field)
    if _is_repeated(field):
        if convert is None:
            return lambda m: list(getattr(m, name))
        return lambda m: [convert(v) for v in getattr(m, name)]
    if field.type == FieldDescriptor.TYPE_MESSAGE:
        return lambda m: convert(getattr(m, name)) if m.HasField(name) else None
    if convert is None:
        return lambda m: getattr(m, name)
    return lambda m: convert(getattr(m, name))


def _converter(field: FieldDescriptor):
    """A single value's JSON value, or None where it is the value itself."""
    if field.type == FieldDescriptor.TYPE_ENUM:
        names = {v.number: short_name(field.enum_type, v.number) for v in field.enum_type.values}
        enum_type = field.enum_type
        return lambda v: names[v] if v in names else short_name(enum_type, v)
    if field.type == FieldDescriptor.TYPE_MESSAGE:
        kind = field.message_type.full_name
        if kind == _TIMESTAMP:
            return lambda v: v.ToJsonString()
        if kind == _DURATION:
            return lambda v: v.seconds + v.nanos / 1e9
        return to_json
    return None


Run = model_of(pb.Run.DESCRIPTOR)
Attempt = model_of(pb.Attempt.DESCRIPTOR)
Task = model_of(pb.Task.DESCRIPTOR)
Report = model_of(spb.Report.DESCRIPTOR)
Comparison = model_of(spb.Comparison.DESCRIPTOR)
DatasetsList = model_of(spb.ListDatasetsResponse.DESCRIPTOR)
TasksPage = model_of(spb.ListTasksResponse.DESCRIPTOR)
HarnessesList = model_of(spb.ListHarnessesResponse.DESCRIPTOR)
ScorersList = model_of(spb.ListScorersResponse.DESCRIPTOR)
JudgesList = model_of(spb.ListJudgesResponse.DESCRIPTOR)
CriterionTable = model_of(spb.CriterionTable.DESCRIPTOR)
UsageList = model_of(spb.ListAttemptUsageResponse.DESCRIPTOR)
MiningList = model_of(spb.ListHistoryMiningResponse.DESCRIPTOR)


class RunsPage(BaseModel):
    runs: list[Run]
    next_page_token: str


class AttemptsPage(BaseModel):
    attempts: list[Attempt]
    next_page_token: str


class Event(BaseModel):
    seq: int
    time: str | None = None
    #: Seconds since the attempt started (null when it has no start time).
    offset: float | None = None
    duration: float
    type: str
    name: str
    #: The payload, parsed; shortened when `truncated`.
    payload: Any = None
    #: True when strings, lists or nesting were cut for the preview.
    truncated: bool
    #: Size of the recorded payload JSON, in bytes.
    payload_bytes: int
    #: True when the store sent only the payload's first bytes (a huge event in a list):
    #: `payload` is then that text, shortened; the whole event is one request away.
    payload_cut: bool = False


class EventsPage(BaseModel):
    events: list[Event]
    next_page_token: str


class Health(BaseModel):
    status: str
    store: str


def seconds_of(timestamp) -> float | None:
    if timestamp.seconds == 0 and timestamp.nanos == 0:
        return None
    return timestamp.seconds + timestamp.nanos / 1e9


def preview(value, chars: int, items: int = PREVIEW_ITEMS, depth: int = PREVIEW_DEPTH) -> tuple[Any, bool]:
    """`value` with long strings and lists shortened; True when anything was cut."""
    cut = False

    def walk(v, level: int):
        nonlocal cut
        if isinstance(v, str):
            if len(v) > chars:
                cut = True
                return v[:chars] + ELLIPSIS
            return v
        if isinstance(v, (list, dict)) and level >= depth:
            cut = True
            return ELLIPSIS
        if isinstance(v, list):
            if len(v) > items:
                cut = True
                return [walk(x, level + 1) for x in v[:items]] + [f"{ELLIPSIS} {len(v) - items} more"]
            return [walk(x, level + 1) for x in v]
        if isinstance(v, dict):
            shown = list(v.items())
            if len(shown) > items:
                cut = True
                shown = shown[:items]
            return {k[: max(chars, 1000)]: walk(x, level + 1) for k, x in shown}
        return v

    return walk(value, 0), cut


def event_json(event, start: float | None, chars: int | None) -> dict:
    """An event for HTTP; `chars` None keeps the payload whole."""
    try:
        payload = json.loads(event.payload_json) if event.payload_json and not event.payload_cut else {}
    except ValueError:
        payload = event.payload_json  # not JSON after all: shown as recorded text
    if event.payload_cut:
        payload = event.payload_json  # the first bytes of a huge payload: shown as text
    truncated = False
    if chars is not None:
        payload, truncated = preview(payload, chars)
    time = seconds_of(event.time)
    return {
        "seq": event.seq,
        "time": event.time.ToJsonString() if time is not None else None,
        "offset": round(time - start, 6) if time is not None and start is not None else None,
        "duration": event.duration.seconds + event.duration.nanos / 1e9,
        "type": event.type,
        "name": event.name,
        "payload": payload,
        "payload_bytes": event.payload_bytes or len(event.payload_json.encode()),
        "truncated": truncated or event.payload_cut,
        "payload_cut": event.payload_cut,
    }
