"""The agent CLIs' JSON streams into HEMRA events, on streams the real CLIs printed
(tests/fixtures/agent-streams: a shell call then a final text, and a model API error)."""

import json
from pathlib import Path

import pytest

from hemra.services.executor.harnesses.cli.claude_code import ClaudeStream
from hemra.services.executor.harnesses.cli.codex import CodexStream
from hemra.services.executor.harnesses.cli.pi import PiStream

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "agent-streams"
STREAMS = {"claude": ClaudeStream, "codex": CodexStream, "pi": PiStream}


def parse(name: str, chunk: int | None = None):
    """(stream, [(type, name, payload)]) for a fixture fed whole, or in chunks of `chunk` bytes."""
    stream = STREAMS[name.split("-")[0]]()
    data = (FIXTURES / f"{name}.jsonl").read_bytes()
    chunks = [data] if chunk is None else [data[i : i + chunk] for i in range(0, len(data), chunk)]
    events = [e for c in chunks for e in stream.feed(c)] + stream.close()
    return stream, [(e.type, e.name, json.loads(e.payload_json)) for e in events]


def of(events, type_, name=None):
    return [p for t, n, p in events if t == type_ and (name is None or n == name)]


@pytest.mark.parametrize("name,tool", [("claude", "Bash"), ("codex", "command_execution"), ("pi", "bash")])
def test_stream__shell_call_then_text(name, tool):
    stream, events = parse(name)
    [call] = of(events, "tool_call")
    assert "echo hello > out.txt" in json.dumps(call["arguments"])
    assert of(events, "tool_call", tool) == [call]
    [result] = of(events, "tool_result", tool)
    assert result["id"] == call["id"] and result["is_error"] is False
    said = [m["text"] for m in of(events, "message", "assistant")]
    assert said[-1] == stream.final_text == "I created out.txt containing 'hello'. Done."
    assert sum(u["input_tokens"] for u in of(events, "usage")) == 201
    assert sum(u["output_tokens"] for u in of(events, "usage")) == 40
    assert stream.failure == ""
    assert of(events, "output") == [] and of(events, "error") == []


@pytest.mark.parametrize("name", ["claude", "codex", "pi", "claude-api-error", "pi-api-error"])
def test_stream__same_events_whatever_the_chunks(name):
    whole = parse(name)[1]
    assert parse(name, chunk=7)[1] == whole
    assert parse(name, chunk=4096)[1] == whole


def test_claude__version_cost_and_tool_output():
    stream, events = parse("claude")
    assert stream.version == "2.1.332"
    assert of(events, "status", "init")[0]["version"] == "2.1.332"
    [usage] = of(events, "usage")
    assert usage["cost_usd"] == pytest.approx(0.001604)
    assert usage["models"]["claude-opus-5-5"]["input_tokens"] == 201
    assert of(events, "tool_result")[0]["output"] == "(Bash completed with no output)"
    assert of(events, "status", "result")[0]["is_error"] is False


def test_codex__command_output_and_no_cost():
    stream, events = parse("codex")
    [result] = of(events, "tool_result")
    assert result["exit_code"] == 0 and result["status"] == "completed"
    assert "cost_usd" not in of(events, "usage")[0]
    assert stream.version == ""  # codex's stream carries none; --version gives it


@pytest.mark.parametrize(
    "name,said",
    [
        ("claude-api-error", "model API status 500"),
        ("codex-api-error", "codex turn failed"),
        ("pi-api-error", "500 scripted outage"),  # pi exits 0 here: only the stream tells
    ],
)
def test_stream__model_api_error_is_a_failure(name, said):
    stream, events = parse(name)
    assert said in stream.failure
    assert of(events, "error")


def test_pi__a_successful_retry_clears_the_failure():
    stream = PiStream()
    failed = {
        "type": "message_end",
        "message": {"role": "assistant", "content": [], "stopReason": "error", "errorMessage": "500 boom", "usage": {}},
    }
    ok = {
        "type": "message_end",
        "message": {
            "role": "assistant",
            "stopReason": "stop",
            "usage": {},
            "content": [{"type": "text", "text": "done"}],
        },
    }
    stream.feed((json.dumps(failed) + "\n").encode())
    assert "500 boom" in stream.failure
    stream.feed((json.dumps(ok) + "\n").encode())
    assert stream.failure == ""


@pytest.mark.parametrize(
    "line",
    [
        b"not json",
        b'{"type": "assistant", "message": {"content": ["x"]}',
        b'["a list"]',
        b'"a string"',
        b"\xff\xfe binary",
    ],
)
@pytest.mark.parametrize("name", sorted(STREAMS))
def test_stream__malformed_lines_become_output_events(name, line):
    stream = STREAMS[name]()
    [kept] = stream.feed(line + b"\n") + stream.close()
    assert kept.type == "output" and kept.name == stream.agent
    assert json.loads(kept.payload_json)["text"] == line.decode(errors="replace")


@pytest.mark.parametrize(
    "name,line",
    [
        ("claude", {"type": "assistant", "message": {"content": "not a list"}}),
        ("claude", {"type": "assistant"}),
        ("codex", {"type": "item.completed"}),
        ("pi", {"type": "message_end", "message": "not an object"}),
    ],
)
def test_stream__events_of_an_unknown_shape_are_kept_as_output(name, line):
    stream = STREAMS[name]()
    [kept] = stream.feed(json.dumps(line).encode() + b"\n")
    assert kept.type == "output" and "unreadable event" in json.loads(kept.payload_json)["note"]


def test_stream__unknown_event_types_are_left_to_the_raw_stream():
    stream = CodexStream()
    assert stream.feed(b'{"type": "turn.started"}\n{"type": "something.new", "x": 1}\n') == []


def test_stream__last_line_without_newline_is_read_at_close():
    stream = ClaudeStream()
    assert stream.feed(b'{"type":"system","subtype":"init","claude_code_version":"9.1.0"}') == []
    [init] = stream.close()
    assert init.name == "init" and stream.version == "9.1.0"


def test_codex__mcp_tool_call_result_and_error():
    """Codex's mcp_tool_call items: the call names server, tool and arguments; the result is the
    tool's text content, or its error."""
    lines = [
        {"type": "item.started", "item": {"id": "item_1", "type": "mcp_tool_call", "server": "notes", "tool": "lookup",
                                          "arguments": {"key": "door"}, "result": None, "error": None,
                                          "status": "in_progress"}},
        {"type": "item.completed", "item": {"id": "item_1", "type": "mcp_tool_call", "server": "notes",
                                            "tool": "lookup", "arguments": {"key": "door"},
                                            "result": {"content": [{"type": "text", "text": "the word"}]},
                                            "error": None, "status": "completed"}},
        {"type": "item.completed", "item": {"id": "item_2", "type": "mcp_tool_call", "server": "notes",
                                            "tool": "lookup", "arguments": {}, "result": None,
                                            "error": {"message": "tool failed: no key"}, "status": "failed"}},
    ]  # fmt: skip
    stream = CodexStream()
    events = [e for line in lines for e in stream.feed((json.dumps(line) + "\n").encode())]
    events = [(e.type, e.name, json.loads(e.payload_json)) for e in events]
    calls = of(events, "tool_call", "mcp_tool_call")
    assert calls[0] == {
        "id": "item_1",
        "arguments": {"server": "notes", "tool": "lookup", "arguments": {"key": "door"}},
    }
    [first, second] = of(events, "tool_result", "mcp_tool_call")
    assert (first["output"], first["is_error"]) == ("the word", False)
    assert (second["output"], second["is_error"]) == ("tool failed: no key", True)
