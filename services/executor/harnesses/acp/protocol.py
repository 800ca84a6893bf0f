"""The Agent Client Protocol as HEMRA speaks it: constants, errors, and the checks and views
of the values an agent sends."""

import json

PROTOCOL_VERSION = 1
CHANNEL = "/tmp/hemra-acp"
#: How long a cancelled prompt may take to end, and a finished agent to exit, before it is killed.
CANCEL_GRACE_SECS = 5.0
EXIT_GRACE_SECS = 2.0
#: Output a terminal keeps when the agent names no limit, and the most it may name.
TERMINAL_OUTPUT_BYTES = 1024 * 1024
MAX_TERMINAL_OUTPUT_BYTES = 16 * 1024 * 1024
#: Longest JSON-RPC line read from the agent; a longer one is split into output, never parsed.
MAX_LINE_BYTES = 16 * 1024 * 1024
#: The largest file fs/read_text_file serves (a bigger one is refused, never cut).
MAX_READ_BYTES = 16 * 1024 * 1024
#: Longest agent version kept, and the end of standard error kept for messages.
MAX_VERSION = 200
TAIL_BYTES = 4096
#: Streamed message text logged in parts of this many characters; tool calls remembered until
#: they end, at most this many, each argument kept up to MAX_REMEMBERED_BYTES of JSON.
MAX_MESSAGE_CHARS = 256 * 1024
MAX_OPEN_TOOL_CALLS = 1000
MAX_REMEMBERED_BYTES = 64 * 1024
#: JSON-RPC error codes.
INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL = -32600, -32601, -32602, -32603
RESOURCE_NOT_FOUND = -32002


class AgentExited(Exception):
    pass


class RemoteError(Exception):
    """The agent answered a request with a JSON-RPC error."""


class ChannelBroken(Exception):
    """A message could not be written into the sandbox's channel (the agent's doing)."""


class OutsideSchema(Exception):
    """The agent answered one of HEMRA's requests outside the ACP schema."""

    def __init__(self, message: str, raw=None):
        super().__init__(message)
        self.raw = raw


class Refusal(Exception):
    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code = code


def dict_of(value) -> dict:
    return value if isinstance(value, dict) else {}


def objects(value) -> list[dict]:
    """The objects of a list the schema says holds objects (anything else: none)."""
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def object_of(result, method: str) -> dict:
    if not isinstance(result, dict):
        raise OutsideSchema(f"the agent answered {method} with {json_type(result)}, not an object", result)
    return result


def prompt_answer(result) -> dict:
    answer = object_of(result, "session/prompt")
    if not isinstance(answer.get("stopReason"), str):
        raise OutsideSchema(
            f"the agent answered session/prompt with stopReason {shown(answer.get('stopReason'))}", answer
        )
    return answer


def valid_id(value) -> bool:
    return value is None or (isinstance(value, str | int | float) and not isinstance(value, bool))


def json_type(value) -> str:
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean", type(None): "null"}
    return names.get(type(value), "a number")


def shown(value) -> str:
    """A value the agent sent, for a message: its JSON, short."""
    return raw_json(value)[:100]


def raw_json(value) -> str:
    """A value the agent sent, as JSON (for the error event's raw text)."""
    try:
        return json.dumps(value, ensure_ascii=False)[:MAX_REMEMBERED_BYTES]
    except (ValueError, RecursionError):
        return repr(value)[:MAX_REMEMBERED_BYTES]


def small(value):
    """`value`, or a stand-in when its JSON is longer than MAX_REMEMBERED_BYTES."""
    size = len(json.dumps(value, ensure_ascii=False, default=str))
    return value if size <= MAX_REMEMBERED_BYTES else {"truncated": True, "json_chars": size}


def content_text(content) -> str:
    """The text of a tool call's content list (content blocks, diffs, terminals)."""
    parts = []
    for item in content or []:
        if not isinstance(item, dict):
            continue
        inner = item.get("content") if item.get("type") == "content" else item
        if isinstance(inner, dict) and inner.get("type") == "text":
            parts.append(inner.get("text", ""))
        elif item.get("type") == "diff":
            parts.append(f"diff {item.get('path', '')}")
        elif item.get("type") == "terminal":
            parts.append(f"terminal {item.get('terminalId', '')}")
    return "\n".join(parts)


def last_line(said: str, limit: int = 300) -> str:
    lines = [line for line in said.strip().splitlines() if line.strip()]
    return lines[-1][:limit] if lines else ""
