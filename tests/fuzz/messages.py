"""Hypothesis strategies for protobuf requests, from their descriptors: each field's type gives
its values (integers at and past their type's ends, nan and inf, strings with NULs, "../" and
absolute paths, a known-good identifier bent out of shape), messages nest to a bounded depth.
`mutated_request` starts from a valid request and changes one field; `any_request` builds one
from nothing. Both lean on `known` strings (real ids, labels, digests, page tokens) so that the
fuzz reaches past the first lookup."""

import base64
import json

from google.protobuf import descriptor as d
from hypothesis import strategies as st

from tests.fuzz.mutate import JSON, ODD_STRINGS, json_text, mutated

_RANGES = {
    d.FieldDescriptor.TYPE_INT32: (-(2**31), 2**31 - 1),
    d.FieldDescriptor.TYPE_SINT32: (-(2**31), 2**31 - 1),
    d.FieldDescriptor.TYPE_SFIXED32: (-(2**31), 2**31 - 1),
    d.FieldDescriptor.TYPE_ENUM: (-(2**31), 2**31 - 1),
    d.FieldDescriptor.TYPE_INT64: (-(2**63), 2**63 - 1),
    d.FieldDescriptor.TYPE_SINT64: (-(2**63), 2**63 - 1),
    d.FieldDescriptor.TYPE_SFIXED64: (-(2**63), 2**63 - 1),
    d.FieldDescriptor.TYPE_UINT32: (0, 2**32 - 1),
    d.FieldDescriptor.TYPE_FIXED32: (0, 2**32 - 1),
    d.FieldDescriptor.TYPE_UINT64: (0, 2**64 - 1),
    d.FieldDescriptor.TYPE_FIXED64: (0, 2**64 - 1),
}
MAX_DEPTH = 3


def b64(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def strings(known: list[str]):
    """Strings: the known-good ones, bent ones, hostile ones and any text."""
    real = st.sampled_from(known or [""])
    bent = st.one_of(
        st.tuples(real, ODD_STRINGS | st.text(max_size=4)).map("".join),
        st.tuples(ODD_STRINGS, real).map("".join),
        st.tuples(real, st.integers(0, 40)).map(lambda p: p[0][: p[1]]),
        real.map(str.upper),
        real.map(lambda s: s + "/" + s),
        real.map(b64),  # a page token's shape around a real value
        st.tuples(st.floats() | st.integers(-(2**70), 2**70), real).map(lambda p: b64(f"{p[0]}/{p[1]}")),
        real.map(lambda s: b64(s + "\x1f" + s)),
    )
    return st.one_of(real, bent, real, ODD_STRINGS, st.text(max_size=20))


def _json_texts(known_json: list[str]):
    """JSON text fields (definition_json, ...): a real one with one value changed, or any JSON."""
    documents = [json.loads(text) for text in known_json]
    changed = st.sampled_from(documents).flatmap(mutated) if documents else st.nothing()
    return st.one_of(changed, JSON).map(json_text) | st.text(max_size=20)


def field_values(field: d.FieldDescriptor, known: list[str], known_json: list[str], depth: int):
    """Values for one field (a list for a repeated one, a dict for a map)."""
    if field.message_type is not None and field.message_type.GetOptions().map_entry:
        key = _single(field.message_type.fields_by_name["key"], known, known_json, depth)
        value = _single(field.message_type.fields_by_name["value"], known, known_json, depth)
        return st.dictionaries(key, value, max_size=3)
    single = _single(field, known, known_json, depth)
    if field.is_repeated:
        return st.lists(single, max_size=3)
    return single


def _single(field: d.FieldDescriptor, known: list[str], known_json: list[str], depth: int):
    kind = field.type
    if kind in _RANGES:
        low, high = _RANGES[kind]
        ends = st.sampled_from([low, high, 0, -1 if low < 0 else 1, 1, 2**31 - 1 if high > 2**31 else high])
        valid = [v.number for v in field.enum_type.values] if kind == d.FieldDescriptor.TYPE_ENUM else []
        return st.one_of(ends, st.integers(low, high), *([st.sampled_from(valid)] if valid else []))
    if kind == d.FieldDescriptor.TYPE_DOUBLE:
        return st.floats()
    if kind == d.FieldDescriptor.TYPE_FLOAT:
        return st.floats(width=32)
    if kind == d.FieldDescriptor.TYPE_BOOL:
        return st.booleans()
    if kind == d.FieldDescriptor.TYPE_BYTES:
        return st.binary(max_size=64) | st.sampled_from([b"", b"\x00" * 8, b"{}", b"[" * 5000])
    if kind == d.FieldDescriptor.TYPE_STRING:
        if field.name.endswith("_json"):
            return _json_texts(known_json)
        return strings(known)
    return messages(field.message_type, known, known_json, depth + 1)


def messages(descriptor: d.Descriptor, known: list[str], known_json: list[str], depth: int = 0):
    """Any message of `descriptor`'s type, some of its fields set."""
    from google.protobuf import message_factory

    cls = message_factory.GetMessageClass(descriptor)
    if depth >= MAX_DEPTH:
        return st.just(cls())
    optional = {f.name: field_values(f, known, known_json, depth) for f in descriptor.fields}
    return st.fixed_dictionaries({}, optional=optional).map(lambda values: _built(cls, values))


def _built(cls, values: dict):
    message = cls()
    for name, value in values.items():
        set_field(message, name, value)
    return message


def set_field(message, name: str, value) -> None:
    field = message.DESCRIPTOR.fields_by_name[name]
    if field.message_type is not None and field.message_type.GetOptions().map_entry:
        target = getattr(message, name)
        target.clear()
        for key, item in value.items():
            if field.message_type.fields_by_name["value"].message_type is not None:
                target[key].CopyFrom(item)
            else:
                target[key] = item
    elif field.is_repeated:
        target = getattr(message, name)
        del target[:]
        target.extend(value)
    elif field.message_type is not None:
        getattr(message, name).CopyFrom(value)
    else:
        setattr(message, name, value)


def _places(descriptor: d.Descriptor, prefix=(), depth: int = 0):
    """Every field path in a message type, nested message fields to MAX_DEPTH."""
    for field in descriptor.fields:
        yield prefix + (field,)
        nested = field.message_type
        if nested is not None and not nested.GetOptions().map_entry and not field.is_repeated and depth + 1 < MAX_DEPTH:
            yield from _places(nested, prefix + (field,), depth + 1)


@st.composite
def mutated_request(draw, seed, known: list[str], known_json: list[str]):
    """`seed` (a valid request) with one field, anywhere in it, set to a drawn value."""
    request = type(seed)()
    request.CopyFrom(seed)
    places = list(_places(seed.DESCRIPTOR))
    if not places:
        return request
    path = draw(st.sampled_from(places))
    target = request
    for field in path[:-1]:
        target = getattr(target, field.name)
    last = path[-1]
    set_field(target, last.name, draw(field_values(last, known, known_json, len(path))))
    return request


def any_request(seed, known: list[str], known_json: list[str]):
    """The seed itself, the seed with one field changed (most often), or any request."""
    return st.one_of(
        st.just(seed),
        mutated_request(seed, known, known_json),
        mutated_request(seed, known, known_json),
        messages(seed.DESCRIPTOR, known, known_json),
    )
