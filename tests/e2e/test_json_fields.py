"""`--json` output holds every field of what it prints, zero or not: a script reads
`"passed": 0`, never a missing key (protobuf leaves defaults out unless told)."""

import json

from hemra.v1 import common_pb2 as pb
from hemra.v1 import store_service_pb2 as spb
from tests.e2e.helpers import hemra, runs, show


def _fields(message_type) -> set[str]:
    """Every field but singular messages: those keep their presence (unset means "none": no
    usage reported, no baseline to be compared with), as the docs say."""
    return {f.name for f in message_type.DESCRIPTOR.fields if not (f.message_type and not f.is_repeated)}


def test_json_output__zero_fields_are_printed(hemra_env):
    # nop fails its one task: passed, errored, cancelled, running, queued are all 0.
    assert hemra(hemra_env, "run", "-H", "nop", "-d", "hemra-offline", "-t", "hemra/reverse-lines").returncode == 0
    [listed] = runs(hemra_env)
    assert _fields(pb.Run) <= set(listed), sorted(_fields(pb.Run) - set(listed))
    assert listed["open_jobs"] == [] and listed["problem"] == ""
    assert set(listed["progress"]) == _fields(pb.RunProgress) and listed["progress"]["passed"] == 0
    data = show(hemra_env, listed["id"])
    [attempt] = data["attempts"]
    assert attempt["exit_code"] == 0 and attempt["usage_differs"] is False and attempt["problem"] == "", attempt
    assert _fields(pb.Attempt) <= set(attempt), sorted(_fields(pb.Attempt) - set(attempt))
    [row] = data["report"]["datasets"][0]["rows"]
    assert row["passed"] == 0 and row["cancelled"] == 0 and _fields(spb.ReportRow) <= set(row), sorted(row)
    compared = hemra(hemra_env, "compare", listed["id"], "--json")
    assert compared.returncode == 0, compared.stderr
    [row] = json.loads(compared.stdout)["datasets"][0]["rows"]
    assert row["passed"] == 0 and _fields(spb.ReportRow) <= set(row)
