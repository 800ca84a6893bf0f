"""The three provider APIs the scripted model speaks, as pure functions of a request body.

Each `answer_*` returns a Reply: a JSON body with a status, or a list of SSE
frames (event name or None, data) when the request asked to stream.
"""

import itertools
import json
import time
from dataclasses import dataclass, field

from tests.modelserver.script import Script, Turn

#: Tool names a client's shell tool goes by; otherwise any tool taking "command" or "cmd".
SHELL_NAMES = ("bash", "shell", "exec_command", "run_shell_command", "terminal")
SIDE_ANSWER = "OK."
#: A computer-use tool (Anthropic's computer_2025*, OpenAI's computer_use_preview): a script's
#: {"tool": "computer", "arguments": {"action": ...}} turns call it.
COMPUTER = "computer"
_ids = itertools.count(1)


@dataclass
class Reply:
    status: int = 200
    body: dict | None = None
    frames: list[tuple[str | None, object]] = field(default_factory=list)


def _id(prefix: str) -> str:
    return f"{prefix}_{next(_ids):08d}"


def shell_arguments(tools: list[tuple[str, dict]], command: str) -> tuple[str, dict] | None:
    """(tool name, arguments) for `command` with the request's own shell tool, from its JSON schema."""

    def props(schema):
        return (schema or {}).get("properties") or {}

    named = [t for t in tools if t[0].lower() in SHELL_NAMES]
    shaped = [t for t in tools if {"command", "cmd"} & set(props(t[1]))]
    for name, schema in named + shaped:
        properties = props(schema)
        if "cmd" in properties:
            return name, {"cmd": command}
        if "command" in properties:
            if properties["command"].get("type") == "array":
                return name, {"command": ["bash", "-lc", command]}
            arguments = {"command": command}
            if "description" in properties:
                arguments["description"] = "Run the scripted command"
            return name, arguments
    return None


def _error_body(api: str, turn: Turn) -> dict:
    if api == "anthropic":
        return {"type": "error", "error": {"type": "api_error", "message": turn.message}}
    return {"error": {"message": turn.message, "type": "server_error", "param": None, "code": None}}


# -- Anthropic Messages ------------------------------------------------------------------------


def answer_anthropic(body: dict, script: Script, forced: Turn | None = None) -> Reply:
    tools = [(t.get("name", ""), t.get("input_schema") or {}) for t in body.get("tools") or []]
    done = sum(
        1
        for m in body.get("messages") or []
        if isinstance(m.get("content"), list)
        for block in m["content"]
        if isinstance(block, dict) and block.get("type") == "tool_result"
    )
    turn, call = (forced, None) if forced else _pick(tools, done, script)
    if turn.error:
        return Reply(turn.error, _error_body("anthropic", turn))
    content = (
        [{"type": "tool_use", "id": _id("toolu"), "name": call[0], "input": call[1]}]
        if call
        else [{"type": "text", "text": turn.text if turn.text is not None else SIDE_ANSWER}]
    )
    stop = "tool_use" if call else "end_turn"
    if turn.refuse:
        content, stop = [], "refusal"
    usage = {
        "input_tokens": script.usage["input_tokens"],
        "output_tokens": script.usage["output_tokens"],
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }
    message = {
        "id": _id("msg"),
        "type": "message",
        "role": "assistant",
        "model": body.get("model", ""),
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": usage,
    }
    if not body.get("stream"):
        return Reply(body=message)
    start = dict(message, content=[], stop_reason=None, usage=dict(usage, output_tokens=1))
    frames = [("message_start", {"type": "message_start", "message": start}), ("ping", {"type": "ping"})]
    for index, block in enumerate(content):
        if block["type"] == "text":
            frames += [
                ("content_block_start", {"index": index, "content_block": {"type": "text", "text": ""}}),
                ("content_block_delta", {"index": index, "delta": {"type": "text_delta", "text": block["text"]}}),
            ]
        else:
            arguments = json.dumps(block["input"])
            half = len(arguments) // 2
            frames += [("content_block_start", {"index": index, "content_block": dict(block, input={})})]
            frames += [
                ("content_block_delta", {"index": index, "delta": {"type": "input_json_delta", "partial_json": part}})
                for part in (arguments[:half], arguments[half:])
            ]
        frames.append(("content_block_stop", {"index": index}))
    frames += [
        (
            "message_delta",
            {"delta": {"stop_reason": stop, "stop_sequence": None}, "usage": {"output_tokens": usage["output_tokens"]}},
        ),
        ("message_stop", {}),
    ]
    return Reply(frames=[(name, {"type": name, **data}) for name, data in frames])


# -- OpenAI Responses --------------------------------------------------------------------------


def answer_responses(body: dict, script: Script, forced: Turn | None = None) -> Reply:
    tools, namespaced = [], {}
    for t in body.get("tools") or []:
        if t.get("type") == "function":
            tools.append((t.get("name", ""), t.get("parameters") or {}))
        elif t.get("type") == "namespace":  # Codex's MCP tools: namespace mcp__<server>, tools by their own names
            for inner in t.get("tools") or []:
                qualified = f"{t.get('name', '')}__{inner.get('name', '')}"
                tools.append((qualified, inner.get("parameters") or {}))
                namespaced[qualified] = (t.get("name", ""), inner.get("name", ""))
        elif t.get("type") == "computer_use_preview":
            tools.append((COMPUTER, {}))
    items = body.get("input") if isinstance(body.get("input"), list) else []
    done = sum(
        1
        for i in items
        if isinstance(i, dict)
        and i.get("type") in ("function_call_output", "custom_tool_call_output", "computer_call_output")
    )
    turn, call = (forced, None) if forced else _pick(tools, done, script)
    if turn.error:
        return Reply(turn.error, _error_body("openai", turn))
    if call and call[0] == COMPUTER:  # the script's arguments are the action
        item = {
            "type": "computer_call",
            "id": _id("cu"),
            "call_id": _id("call"),
            "action": call[1],
            "status": "completed",
        }
        item["pending_safety_checks"] = []
    elif call:
        item = {
            "type": "function_call",
            "id": _id("fc"),
            "call_id": _id("call"),
            "name": call[0],
            "arguments": json.dumps(call[1]),
            "status": "completed",
        }
        if call[0] in namespaced:
            item["namespace"], item["name"] = namespaced[call[0]]
    else:
        text = turn.text if turn.text is not None else SIDE_ANSWER
        item = {
            "type": "message",
            "id": _id("msg"),
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}],
        }
        if turn.refuse:
            item["content"] = [{"type": "refusal", "refusal": "I can't help with that."}]
    inp, out = script.usage["input_tokens"], script.usage["output_tokens"]
    response = {
        "id": _id("resp"),
        "object": "response",
        "created_at": int(time.time()),
        "model": body.get("model", ""),
        "status": "completed",
        "output": [item],
        "usage": {
            "input_tokens": inp,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": out,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": inp + out,
        },
    }
    if not body.get("stream"):
        return Reply(body=response)
    pending = dict(response, status="in_progress", output=[], usage=None)
    frames = [
        ("response.created", {"response": pending}),
        ("response.in_progress", {"response": pending}),
        ("response.output_item.added", {"output_index": 0, "item": dict(item, status="in_progress")}),
        ("response.output_item.done", {"output_index": 0, "item": item}),
        ("response.completed", {"response": response}),
    ]
    return Reply(frames=[(name, {"type": name, "sequence_number": n, **data}) for n, (name, data) in enumerate(frames)])


# -- OpenAI Chat Completions -------------------------------------------------------------------


def answer_chat(body: dict, script: Script, forced: Turn | None = None) -> Reply:
    tools = [
        ((t.get("function") or {}).get("name", ""), (t.get("function") or {}).get("parameters") or {})
        for t in body.get("tools") or []
    ]
    done = sum(1 for m in body.get("messages") or [] if isinstance(m, dict) and m.get("role") == "tool")
    turn, call = (forced, None) if forced else _pick(tools, done, script)
    if turn.error:
        return Reply(turn.error, _error_body("openai", turn))
    inp, out = script.usage["input_tokens"], script.usage["output_tokens"]
    usage = {
        "prompt_tokens": inp,
        "completion_tokens": out,
        "total_tokens": inp + out,
        "prompt_tokens_details": {"cached_tokens": 0},
    }
    tool_call = (
        {"id": _id("call"), "type": "function", "function": {"name": call[0], "arguments": json.dumps(call[1])}}
        if call
        else None
    )
    text = None if call else (turn.text if turn.text is not None else SIDE_ANSWER)
    finish = "tool_calls" if call else "stop"
    base = {"id": _id("chatcmpl"), "created": int(time.time()), "model": body.get("model", "")}
    if not body.get("stream"):
        message = {"role": "assistant", "content": text}
        if turn.refuse:
            message = {"role": "assistant", "content": None, "refusal": "I can't help with that."}
        if tool_call:
            message["tool_calls"] = [tool_call]
        return Reply(
            body=dict(
                base,
                object="chat.completion",
                usage=usage,
                choices=[{"index": 0, "message": message, "finish_reason": finish}],
            )
        )

    def chunk(delta, finish_reason=None):
        return (
            None,
            dict(
                base,
                object="chat.completion.chunk",
                choices=[{"index": 0, "delta": delta, "finish_reason": finish_reason}],
            ),
        )

    frames = [chunk({"role": "assistant", "content": ""})]
    if tool_call:
        frames.append(chunk({"tool_calls": [dict(tool_call, index=0)]}))
    else:
        frames.append(chunk({"content": text}))
    frames.append(chunk({}, finish))
    if (body.get("stream_options") or {}).get("include_usage"):
        frames.append((None, dict(base, object="chat.completion.chunk", choices=[], usage=usage)))
    frames.append((None, "[DONE]"))
    return Reply(frames=frames)


def _pick(tools: list[tuple[str, dict]], done: int, script: Script) -> tuple[Turn, tuple[str, dict] | None]:
    """The turn for a request holding `done` tool results, and the shell call it makes (if any).

    A request that offers no shell tool is a client's side request (a title, a
    summary): it gets a short text and does not play a turn."""
    if shell_arguments(tools, "true") is None and not any(name == COMPUTER for name, _ in tools):
        return Turn(text=SIDE_ANSWER), None
    turn = script.turn(done)
    if turn.tool is not None:
        return turn, _named_call(tools, turn)
    return turn, (shell_arguments(tools, turn.shell) if turn.shell is not None else None)


def _named_call(tools: list[tuple[str, dict]], turn: Turn) -> tuple[str, dict]:
    """The call of the offered tool named turn.tool: exactly, or qualified as an MCP tool
    (Claude Code's and Codex's mcp__<server>__<tool>). Unoffered, the call names it bare
    (the client then reports an unknown tool)."""
    for name, _ in tools:
        if name == turn.tool or name.endswith("__" + turn.tool):
            return name, dict(turn.arguments)
    return turn.tool, dict(turn.arguments)
