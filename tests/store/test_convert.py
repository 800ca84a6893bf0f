"""Fast conversions give exactly what json_format gives."""

import re

import pytest
from google.protobuf import json_format

from hemra.services.common.errors import InvalidArgument
from hemra.services.store import convert
from hemra.v1 import common_pb2 as pb
from hemra.v1 import store_service_pb2 as spb


def test_to_dict__flat_messages_as_json_format_writes_them():
    messages = [
        spb.TreeEntry(path="a/b", is_dir=True),
        spb.TreeEntry(),
        spb.TreeEntry(path="x", blob_digest="sha256:1", executable=True, size_bytes=12),
        pb.Artifact(path="p", blob_digest="d", size_bytes=0),
        pb.Artifact(path="p", size_bytes=2**40),
        pb.Score(state=pb.SCORE_STATE_SCORED, rewards={"reward": 1.0}, scorer="s"),
        pb.Score(
            state=pb.SCORE_STATE_SCORER_FAILED,
            error="e",
            rewards={"a": float("nan"), "b": float("inf"), "c": float("-inf"), "d": -0.5, "e": 0.0},
        ),
        pb.Score(state=7, scorer_fingerprint="sha256:f"),  # an enum number this build has no name for
        pb.Score(duration={"seconds": 2}),
        pb.Harness(harness_name="h", env=["A", "B"]),
    ]
    for message in messages:
        assert convert.to_dict(message) == json_format.MessageToDict(message), message


def test_tree_json__the_importers_array_reads_back_as_json_format_writes_tree_entries():
    from hemra.services.domain.tree import Entry, tree_json

    entries = [
        Entry("a", True),
        Entry("a/b.sh", False, True, b"#!/bin/sh\n", "sha256:1"),
        Entry("a/empty", False, False, b"", "sha256:2"),
    ]
    messages = [
        spb.TreeEntry(path="a", is_dir=True),
        spb.TreeEntry(path="a/b.sh", blob_digest="sha256:1", executable=True, size_bytes=10),
        spb.TreeEntry(path="a/empty", blob_digest="sha256:2"),
    ]
    assert convert.tree_from_json(tree_json(entries)) == [json_format.MessageToDict(m) for m in messages]


@pytest.mark.parametrize(
    "data, problem",
    [
        (b"[{", "not JSON"),
        (b'[{"path": 1}]', "Expected `str`"),
        (b'[{"path": "a", "owner": "x"}]', "unknown field `owner`"),
        (b'{"path": "a"}', "Expected `array`"),
        (b'[{"path": "a/../../etc/x"}]', "not a relative path inside"),
        (b'[{"path": "/etc/x"}]', "not a relative path inside"),
        (b'[{"path": "a//b"}]', "not a relative path inside"),
    ],
)
def test_tree_json__malformed_arrays_are_refused_naming_the_problem(data, problem):
    with pytest.raises(InvalidArgument, match=re.escape(problem)):
        convert.tree_from_json(data)


def test_checked_tree__an_exports_tree_is_held_to_the_same_rules():
    assert convert.checked_tree(None) is None
    assert convert.checked_tree([{"path": "a", "isDir": True}]) == [{"path": "a", "isDir": True}]
    with pytest.raises(InvalidArgument, match="not a relative path inside"):
        convert.checked_tree([{"path": "../outside", "blobDigest": "sha256:1"}])
