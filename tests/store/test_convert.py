"""Fast conversions give exactly what json_format gives."""

from google.protobuf import json_format

from hemra.v1 import common_pb2 as pb
from hemra.v1 import store_service_pb2 as spb
from services.store import convert


def test_to_dict__flat_messages_as_json_format_writes_them():
    messages = [spb.TreeEntry(path="a/b", is_dir=True), spb.TreeEntry(),
                spb.TreeEntry(path="x", blob_digest="sha256:1", executable=True, size_bytes=12),
                pb.Artifact(path="p", blob_digest="d", size_bytes=0), pb.Artifact(path="p", size_bytes=2 ** 40),
                pb.Score(state=pb.SCORE_STATE_SCORED, rewards={"reward": 1.0}, scorer="s"),
                pb.Harness(harness_name="h", env=["A", "B"])]
    for message in messages:
        assert convert.to_dict(message) == json_format.MessageToDict(message), message
