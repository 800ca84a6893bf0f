"""The scripted model server over real HTTP on loopback: three APIs, streamed or not,
turns picked by counting tool results, side requests, errors, and its command line."""

import json
import subprocess
import sys
import urllib.error
import urllib.request

import pytest

from tests.conftest import REPO
from tests.modelserver import SCRIPT_ENDED, ModelServer, parse

SCRIPT = [{"shell": "echo hi > out.txt"}, {"text": "All done."}]
BASH = {
    "name": "Bash",
    "input_schema": {
        "type": "object",
        "required": ["command"],
        "properties": {"command": {"type": "string"}, "description": {"type": "string"}},
    },
}
EXEC = {
    "type": "function",
    "name": "exec_command",
    "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}},
}
CHAT_BASH = {
    "type": "function",
    "function": {"name": "bash", "parameters": {"type": "object", "properties": {"command": {"type": "string"}}}},
}


@pytest.fixture
def server():
    with ModelServer(parse({"turns": SCRIPT, "usage": {"input_tokens": 7, "output_tokens": 3}})) as s:
        yield s


def post(server, path: str, body: dict) -> tuple[int, str, object]:
    request = urllib.request.Request(
        server.url + path,
        json.dumps(body).encode(),
        method="POST",
        headers={"Content-Type": "application/json", "x-api-key": "k"},
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            raw, kind, status = response.read().decode(), response.headers["Content-Type"], response.status
    except urllib.error.HTTPError as error:
        return error.code, "", json.loads(error.read())
    if kind == "text/event-stream":
        return status, kind, sse(raw)
    return status, kind, json.loads(raw)


def sse(raw: str) -> list[tuple[str | None, object]]:
    frames = []
    for block in raw.strip().split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines())
        data = fields["data"]
        frames.append((fields.get("event"), data if data == "[DONE]" else json.loads(data)))
    return frames


def anthropic(results: int, stream: bool = False, tools=(BASH,)) -> dict:
    messages = [{"role": "user", "content": "go"}]
    for i in range(results):
        messages += [
            {"role": "assistant", "content": [{"type": "tool_use", "id": f"t{i}", "name": "Bash", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{i}", "content": ""}]},
        ]
    return {"model": "m1", "messages": messages, "tools": list(tools), "stream": stream}


def test_anthropic__tool_call_then_text(server):
    status, _, first = post(server, "/v1/messages?beta=true", anthropic(0))
    assert status == 200 and first["stop_reason"] == "tool_use"
    [call] = first["content"]
    assert call["name"] == "Bash" and call["input"]["command"] == "echo hi > out.txt"
    _, _, second = post(server, "/v1/messages", anthropic(1))
    assert second["content"] == [{"type": "text", "text": "All done."}] and second["stop_reason"] == "end_turn"
    assert second["usage"]["input_tokens"] == 7 and second["usage"]["output_tokens"] == 3
    _, _, third = post(server, "/v1/messages", anthropic(2))
    assert third["content"][0]["text"] == SCRIPT_ENDED
    assert [r.path for r in server.model_requests()] == ["/v1/messages"] * 3
    assert server.model_requests()[0].headers["x-api-key"] == "k"


def test_anthropic__streamed_in_the_messages_event_order(server):
    status, kind, frames = post(server, "/v1/messages", anthropic(0, stream=True))
    assert status == 200 and kind == "text/event-stream"
    names = [name for name, _ in frames]
    assert names == [
        "message_start",
        "ping",
        "content_block_start",
        "content_block_delta",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    assert all(data["type"] == name for name, data in frames)
    arguments = "".join(d["delta"]["partial_json"] for n, d in frames if n == "content_block_delta")
    assert json.loads(arguments)["command"] == "echo hi > out.txt"
    assert frames[-2][1]["delta"]["stop_reason"] == "tool_use"


def test_responses__function_call_streamed_and_not(server):
    body = {"model": "m2", "input": [{"type": "message", "role": "user", "content": []}], "tools": [EXEC]}
    _, _, response = post(server, "/v1/responses", body)
    [item] = response["output"]
    assert item["type"] == "function_call" and json.loads(item["arguments"]) == {"cmd": "echo hi > out.txt"}
    assert response["usage"]["total_tokens"] == 10
    body["input"] += [item, {"type": "function_call_output", "call_id": item["call_id"], "output": ""}]
    _, _, frames = post(server, "/v1/responses", dict(body, stream=True))
    assert [n for n, _ in frames][-1] == "response.completed"
    done = frames[-1][1]["response"]
    assert done["output"][0]["content"][0]["text"] == "All done."
    assert [d["sequence_number"] for _, d in frames] == list(range(len(frames)))


def test_chat__tool_call_streamed_with_usage_then_done(server):
    body = {
        "model": "m3",
        "messages": [{"role": "user", "content": "go"}],
        "tools": [CHAT_BASH],
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    _, _, frames = post(server, "/v1/chat/completions", body)
    assert all(name is None for name, _ in frames) and frames[-1][1] == "[DONE]"
    [call] = frames[1][1]["choices"][0]["delta"]["tool_calls"]
    assert call["function"]["name"] == "bash" and json.loads(call["function"]["arguments"])["command"]
    assert frames[2][1]["choices"][0]["finish_reason"] == "tool_calls"
    assert frames[3][1]["usage"]["prompt_tokens"] == 7
    body["messages"] += [
        {"role": "assistant", "tool_calls": [call]},
        {"role": "tool", "content": "", "tool_call_id": "x"},
    ]
    _, _, answer = post(server, "/v1/chat/completions", dict(body, stream=False))
    assert answer["choices"][0]["message"]["content"] == "All done."


def test_side_requests_without_a_shell_tool_get_a_short_text(server):
    _, _, answer = post(server, "/v1/messages", anthropic(0, tools=()))
    assert answer["content"][0]["type"] == "text" and answer["stop_reason"] == "end_turn"
    # ...and play no turn: the next real request still gets the shell call.
    _, _, first = post(server, "/v1/messages", anthropic(0))
    assert first["content"][0]["type"] == "tool_use"


@pytest.mark.parametrize(
    "schema,expected",
    [
        ({"command": {"type": "array"}}, {"command": ["bash", "-lc", "ls"]}),
        ({"cmd": {"type": "string"}, "command": {"type": "string"}}, {"cmd": "ls"}),
    ],
)
def test_shell_arguments_follow_the_tool_schema(schema, expected):
    from tests.modelserver.apis import shell_arguments

    assert shell_arguments([("Read", {"properties": {"path": {}}}), ("shell", {"properties": schema})], "ls") == (
        "shell",
        expected,
    )


@pytest.mark.parametrize(
    "path,error_key", [("/v1/messages", "type"), ("/v1/responses", "error"), ("/v1/chat/completions", "error")]
)
def test_error_turns_answer_in_the_providers_format(path, error_key):
    bodies = {
        "/v1/messages": anthropic(0),
        "/v1/responses": {"input": [], "tools": [EXEC]},
        "/v1/chat/completions": {"messages": [], "tools": [CHAT_BASH]},
    }
    with ModelServer(parse([{"error": 529, "message": "overloaded now"}])) as server:
        status, _, body = post(server, path, bodies[path])
    assert status == 529 and error_key in body and "overloaded now" in json.dumps(body)


def test_unknown_path_is_404_and_recorded(server):
    status, _, _ = post(server, "/v2/other", {})
    assert status == 404 and server.requests[-1].path == "/v2/other"
    assert server.model_requests() == []


@pytest.mark.parametrize(
    "script,problem",
    [
        ({"turns": "x"}, "list of turns"),
        ([{"shell": "a", "text": "b"}], "turn 0: needs exactly one"),
        ([{"error": 200}], "turn 0: error must be an HTTP status"),
        (["x"], "turn 0: must be an object"),
    ],
)
def test_bad_scripts_are_refused_by_turn(script, problem):
    with pytest.raises(ValueError, match=problem):
        parse(script)


def test_command_line_serves_a_script_file(tmp_path):
    script = tmp_path / "script.json"
    script.write_text(json.dumps(SCRIPT))
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.modelserver", "--script", str(script), "--port", "0"],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        line = process.stdout.readline()
        assert line.startswith("modelserver listening on http://127.0.0.1:")
        url = line.split()[-1]
        request = urllib.request.Request(url + "/v1/messages", json.dumps(anthropic(1)).encode(), method="POST")
        with urllib.request.urlopen(request, timeout=10) as response:
            assert json.loads(response.read())["content"][0]["text"] == "All done."
    finally:
        process.terminate()
        assert process.wait(timeout=10) == 0


def test_command_line_refuses_a_bad_script(tmp_path):
    script = tmp_path / "script.json"
    script.write_text('[{"speak": 1}]')
    done = subprocess.run(
        [sys.executable, "-m", "tests.modelserver", "--script", str(script)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 2 and str(script) in done.stderr and "turn 0" in done.stderr
