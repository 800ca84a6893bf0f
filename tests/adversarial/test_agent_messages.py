"""A hostile agent's malformed messages: JSON lines a program harness prints that HEMRA cannot
take as events, events sent through the harness protocol out of range, an ACP agent's bad
JSON-RPC, artifact names that are not UTF-8. Each runs through the real `hemra run`. All of it
is the agent's doing: the attempt is scored (the agent also solves the task, so reward 1
proves the verifier ran), it is never an infrastructure failure (exactly one attempt: no
retry), and each bad message is in the trace as an error event with its raw text."""

import json
from pathlib import Path

import pytest

from tests.adversarial.test_output_attacks import attempts, events_of, make_tasks, run_attack
from tests.e2e.helpers import hemra

pytestmark = pytest.mark.slow

SOLVE = "hemra harness exec 'echo 42 > /app/answer.txt'\n"


def _errors(events: list[dict], name: str) -> list[dict]:
    return [e["payload"] for e in events if e["type"] == "error" and e["name"] == name]


def _the_attempt(env: dict) -> tuple[dict, list[dict]]:
    found = attempts(env)
    assert len(found) == 1, found  # an infrastructure failure would have been retried
    [attempt] = found
    return attempt, events_of(env, attempt)


def _scored(attempt: dict, outcome: str, reward: float) -> None:
    assert attempt["outcome"] == outcome, attempt
    assert attempt["score"]["state"] == "SCORE_STATE_SCORED", attempt["score"]
    assert attempt["score"]["rewards"]["reward"] == reward


# -- a program harness's JSON lines -------------------------------------------------------------------

BAD_LINES = (
    r"""
echo '{"type": "message", "name": "before", "text": "kept"}'
echo '{"type": "message", "name": "late", "duration": "soon"}'
echo '{"type": "message", "name": "slow", "duration": 1e300}'
echo '{"type": 5, "name": "numbered"}'
echo '{"type": "message", "text": "unterminated'
python3 -c "print('{\"type\": \"deep\", \"x\": ' + '[' * 100000 + ']' * 100000 + '}')"
printf '{"type": "message", "name": "bytes", "text": "\xff\xfe"}\n'
echo '{"type": "message", "name": "surrogate", "text": "\ud800", "when": "now"}'
echo '{not an event, just output'
for i in $(seq 120); do echo "{\"type\": \"flood\", \"duration\": -$i}"; done
echo '{"type": "message", "name": "after", "text": "still read"}'
"""
    + SOLVE
)


def test_program__bad_event_lines_are_errors_and_every_event_after_them_is_kept(hemra_env, tmp_path):
    run_attack(hemra_env, tmp_path, BAD_LINES, "host")
    attempt, events = _the_attempt(hemra_env)
    _scored(attempt, "OUTCOME_COMPLETED", 1.0)
    names = [e["name"] for e in events if e["type"] == "message"]
    assert names == ["before", "surrogate", "after"], names
    [surrogate] = [e["payload"] for e in events if e["name"] == "surrogate"]
    assert surrogate == {"text": "\\ud800", "when": "now"}
    bad = _errors(events, "bad_event_line")
    assert len(bad) == 100  # bounded: the rest are counted
    raws = [b["raw"] for b in bad]
    assert raws[:4] == [
        '{"type": "message", "name": "late", "duration": "soon"}',
        '{"type": "message", "name": "slow", "duration": 1e300}',
        '{"type": 5, "name": "numbered"}',
        '{"type": "message", "text": "unterminated',
    ]
    assert bad[1]["message"].startswith('"duration" must be a number of seconds')
    assert raws[4].startswith('{"type": "deep", "x": [[[') and len(raws[4]) < 4200
    assert bad[4]["raw_bytes"] == 200023
    assert raws[5] == '{"type": "message", "name": "bytes", "text": "\\xff\\xfe"}'
    assert raws[6] == '{"type": "flood", "duration": -1}'
    [count] = [e["payload"] for e in events if e["name"] == "bad_event_line_count"]
    assert count["count"] == 126
    assert {"text": "{not an event, just output\n"} in [
        e["payload"] for e in events if e["type"] == "output" and e["name"] == "stdout"
    ]


# -- events through the harness protocol ----------------------------------------------------------------

EMIT = """
import asyncio, os
from hemra.v1 import common_pb2 as pb, harness_service_pb2 as hpb
from hemra.services.common import transport

async def main():
    channel = transport.channel(os.environ["HEMRA_HARNESS_ADDRESS"])
    call = channel.unary_unary(
        "/hemra.v1.HarnessService/EmitEvents", request_serializer=bytes, response_deserializer=bytes
    )
    metadata = (("authorization", "Bearer " + os.environ["HEMRA_HARNESS_TOKEN"]),)
    far = pb.Event(type="far", payload_json="{}")
    far.time.seconds = 2**62
    long = pb.Event(type="long", payload_json="{}")
    long.duration.seconds = -5
    request = hpb.EmitEventsRequest(events=[
        pb.Event(type="message", name="first", payload_json='{"text": "kept"}'),
        far,
        long,
        pb.Event(type="message", name="broken", payload_json='{"text": '),
        pb.Event(type="message", name="listed", payload_json='[1, 2]'),
        pb.Event(type="message", name="lone", payload_json='{"text": "\\\\ud800"}'),
        pb.Event(type="message", name="last", payload_json='{"text": "kept too"}'),
    ])
    await call(request.SerializeToString(), metadata=metadata)
    raw = hpb.EmitEventsRequest(events=[pb.Event(type="XXXX", payload_json="{}")]).SerializeToString()
    try:
        await call(raw.replace(b"XXXX", b"\\xff\\xfeXX"), metadata=metadata)
        print("accepted")
    except Exception as exc:
        print("refused", type(exc).__name__)
    await channel.close()

asyncio.run(main())
"""


def test_protocol__events_out_of_range_are_errors_not_an_infrastructure_failure(hemra_env, tmp_path):
    (tmp_path / "harnesses").mkdir()
    (tmp_path / "harnesses" / "emit.py").write_text(EMIT)
    run_attack(hemra_env, tmp_path, "python emit.py\n" + SOLVE, "host")
    attempt, events = _the_attempt(hemra_env)
    _scored(attempt, "OUTCOME_COMPLETED", 1.0)
    assert [e["name"] for e in events if e["type"] == "message"] == ["first", "last"]
    bad = _errors(events, "protocol")
    assert [b["event_type"] for b in bad] == ["far", "long", "message", "message", "message"]
    assert "time is out of range (seconds 4611686018427387904" in bad[0]["message"]
    assert "seconds: 4611686018427387904" in bad[0]["raw"]
    assert "duration is out of range (seconds -5" in bad[1]["message"]
    assert bad[2]["message"] == "EmitEvents: an event whose payload_json is not valid JSON"
    assert 'payload_json: "{\\"text\\": "' in bad[2]["raw"]
    assert bad[3]["message"] == "EmitEvents: an event whose payload_json is not a JSON object"
    assert "lone surrogate" in bad[4]["message"] and 'name: "lone"' in bad[4]["raw"]
    # A request that is not valid protobuf (a string that is not UTF-8) is refused to the harness.
    assert {"text": "refused AioRpcError\n"} in [e["payload"] for e in events if e["type"] == "output"]


# -- an ACP agent's JSON-RPC -------------------------------------------------------------------------------

#: An ACP agent (in the sandbox) that solves the task itself, then misbehaves as CASE says.
AGENT = r"""
import json, sys

CASE = __CASE__
open("/app/answer.txt", "w").write("42\n")
out = sys.stdout.buffer

def send(message):
    out.write(json.dumps(message).encode() + b"\n")
    out.flush()

def read():
    return json.loads(sys.stdin.buffer.readline())

init = read()
send({"jsonrpc": "2.0", "id": init["id"], "result": {"protocolVersion": 1, "agentInfo": {"name": "odd", "version": "1"}}})
new = read()
if CASE == "new-string":
    send({"jsonrpc": "2.0", "id": new["id"], "result": "s-1"})
    read()
elif CASE == "new-number":
    send({"jsonrpc": "2.0", "id": new["id"], "result": {"sessionId": 7}})
    read()
send({"jsonrpc": "2.0", "id": new["id"], "result": {"sessionId": "s-1"}})
prompt = read()
if CASE == "noise":
    out.write(b"this is not JSON\n")
    out.write(b"[1, 2, 3]\n")
    out.write(b'{"jsonrpc": "2.0", "id": 999, "result": {}}\n')
    out.write(b'{"jsonrpc": "2.0", "id": {"x": 1}, "result": {}}\n')
    out.write(b'{"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s-1", "update": 5}}\n')
    out.write(b'{"jsonrpc": "2.0", "method": "session/update", "params": [1]}\n')
    out.write(b'{"jsonrpc": "2.0", "method": "session/update", "params": {"update": {"sessionUpdate": '
              b'"tool_call", "toolCallId": ["x"], "status": "completed", "content": 5}}}\n')
    out.write(b'{"jsonrpc": "2.0", "method": "session/update", "params": {"update": {"sessionUpdate": '
              b'"agent_message_chunk", "content": {"type": "text", "text": "\\ud800 odd"}}}}\n')
    out.write(b'{"jsonrpc": "2.0", "method": 5, "params": {}}\n')
    out.write(b'{"jsonrpc": "2.0", "id": 77, "method": "fs/read_text_file", "params": {"sessionId": "s-1", "path": 3}}\n')
    out.write(b"\x80 not UTF-8\n")
    out.write(b"x" * (17 * 1024 * 1024) + b"\n")
    out.flush()
    answer = read()
    while answer.get("id") != 77:
        answer = read()
    send({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s-1", "update": {
        "sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": json.dumps(answer["error"])}}}})
    send({"jsonrpc": "2.0", "id": prompt["id"], "result": {"stopReason": "end_turn"}})
elif CASE == "prompt-string":
    send({"jsonrpc": "2.0", "id": prompt["id"], "result": "done"})
elif CASE == "prompt-stop-number":
    send({"jsonrpc": "2.0", "id": prompt["id"], "result": {"stopReason": 5, "usage": 3}})
sys.stdin.buffer.read()
"""


def _run_acp(env: dict, tmp_path: Path, case: str) -> None:
    # The 17 MiB line is output: room for it and the events after it.
    env = {**env, "HEMRA_MAX_EVENT_BYTES": str(64 * 1024 * 1024)}
    (tmp_path / "harnesses").mkdir()
    (tmp_path / "harnesses" / "odd.toml").write_text('kind = "acp"\ncommand = ["python3", "agent.py"]\n')
    (tmp_path / "harnesses" / "agent.py").write_text(AGENT.replace("__CASE__", repr(case)))
    dataset = make_tasks(tmp_path)
    run_file = tmp_path / "run.toml"
    run_file.write_text(f'name = "attack"\nharnesses = ["odd"]\ndatasets = ["{dataset}"]\n[sandbox]\nkind = "host"\n')
    result = hemra(env, "run", str(run_file), cwd=tmp_path, timeout=600)
    assert result.returncode in (0, 1), result.stderr + result.stdout


def test_acp__malformed_messages_are_errors_and_the_conversation_goes_on(hemra_env, tmp_path):
    _run_acp(hemra_env, tmp_path, "noise")
    attempt, events = _the_attempt(hemra_env)
    _scored(attempt, "OUTCOME_COMPLETED", 1.0)
    bad = _errors(events, "protocol")
    found: dict[str, list[str]] = {}
    for error in bad:  # requests are answered concurrently: their errors may come in any order
        found.setdefault(error["message"], []).append(error["raw"])
    not_json = "a message that is not JSON (JSONDecodeError: Expecting value: line 1 column 1 (char 0))"
    assert found[not_json] == ["this is not JSON"]
    assert found["a message that is not a JSON object (an array)"] == ["[1, 2, 3]"]
    assert found["a response to id 999, which HEMRA never sent"] == ['{"jsonrpc": "2.0", "id": 999, "result": {}}']
    assert 'a response to id {"x": 1}, which HEMRA never sent' in found
    assert found["a session/update whose params.update is not an object"] == [
        '{"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s-1", "update": 5}}',
        '{"jsonrpc": "2.0", "method": "session/update", "params": [1]}',
    ]
    [schema] = [m for m in found if m.startswith("a message outside the ACP schema: TypeError")]
    assert '"toolCallId": ["x"]' in found[schema][0]
    assert "a message whose method is a number, not a string" in found
    invalid = "invalid params: path must be a string, not a number"
    assert '"path": 3' in found[invalid][0]
    [utf8] = [m for m in found if m.startswith("a message that is not JSON (UnicodeDecodeError")]
    assert found[utf8] == ["\\x80 not UTF-8"]
    [long] = [
        b for b in bad if b["message"] == f"a line longer than {16 * 1024 * 1024} bytes (kept as output, not read)"
    ]
    assert long["raw"].startswith("xxxx") and long["raw_bytes"] == 16 * 1024 * 1024 and len(long["raw"]) < 4200
    assert len(bad) == 11
    texts = [e["payload"]["text"] for e in events if e["type"] == "message"]
    assert texts == ["\\ud800 odd" + json.dumps({"code": -32602, "message": invalid})]
    assert [e["payload"] for e in events if e["name"] == "stop"] == [{"stop_reason": "end_turn"}]


@pytest.mark.parametrize(
    "case, error",
    [
        ("new-string", "the agent answered session/new with a string, not an object"),
        ("new-number", "the agent answered session/new with sessionId 7"),
        ("prompt-string", "the agent answered session/prompt with a string, not an object"),
        ("prompt-stop-number", "the agent answered session/prompt with stopReason 5"),
    ],
)
def test_acp__an_answer_outside_the_schema_is_a_harness_failure_and_scored(hemra_env, tmp_path, case, error):
    _run_acp(hemra_env, tmp_path, case)
    attempt, events = _the_attempt(hemra_env)
    _scored(attempt, "OUTCOME_HARNESS_FAILED", 1.0)
    assert attempt["error"] == error
    [bad] = _errors(events, "protocol")
    assert bad["message"] == error and bad["raw"]


# -- artifact names ------------------------------------------------------------------------------------------

NAMES = (
    r"""
hemra harness exec 'mkdir -p /logs/artifacts && cd /logs/artifacts && printf one > "$(printf "bad\377name.txt")" && printf two > good.txt && printf three > "$(printf "caf\303\251.txt")"'
"""
    + SOLVE
)


@pytest.mark.parametrize("sandbox", ["host", "docker"])
def test_artifacts__a_name_that_is_not_utf8_is_kept_escaped(hemra_env, tmp_path, sandbox, request):
    if sandbox == "docker":
        request.getfixturevalue("docker_engine")
    run_attack(hemra_env, tmp_path, NAMES, sandbox)
    attempt, events = _the_attempt(hemra_env)
    _scored(attempt, "OUTCOME_COMPLETED", 1.0)
    paths = {a["path"]: int(a["size_bytes"]) for a in attempt["artifacts"] if a["path"].startswith("/logs/artifacts/")}
    assert paths == {
        "/logs/artifacts/bad\\xffname.txt": 3,
        "/logs/artifacts/good.txt": 3,
        "/logs/artifacts/café.txt": 5,
    }
    assert not [e for e in events if e["name"] in ("artifact_skipped", "infrastructure")]
