"""What HEMRA serves to the agent: permission answers, the sandbox's files, terminals."""

import asyncio
import shlex
import time
from typing import TYPE_CHECKING

from hemra.services.executor.events import event
from hemra.services.executor.harnesses.acp.protocol import (
    INTERNAL,
    INVALID_PARAMS,
    MAX_READ_BYTES,
    MAX_TERMINAL_OUTPUT_BYTES,
    RESOURCE_NOT_FOUND,
    TERMINAL_OUTPUT_BYTES,
    Refusal,
    json_type,
)

if TYPE_CHECKING:
    from hemra.services.executor.harnesses.acp.session import Session


async def _permission(session: "Session", params: dict) -> dict:
    wanted = (
        ("allow_once", "allow_always") if session.config.permission == "allow" else ("reject_once", "reject_always")
    )
    options = params.get("options") or []
    chosen = next((o for kind in wanted for o in options if o.get("kind") == kind), None)
    tool = params.get("toolCall") or {}
    await session.trial.events.emit(
        event(
            "permission",
            tool.get("title") or "",
            id=tool.get("toolCallId", ""),
            policy=session.config.permission,
            option=(chosen or {}).get("optionId", ""),
            offered=[o.get("optionId") for o in options],
        )
    )
    if chosen is None:
        return {"outcome": {"outcome": "cancelled"}}
    return {"outcome": {"outcome": "selected", "optionId": chosen["optionId"]}}


def _param(params: dict, name: str, kind: type = str, required: bool = True):
    """params[name] when it is of `kind` (a missing optional one: None); else a refusal with
    JSON-RPC's invalid params."""
    value = params.get(name)
    if value is None and not required:
        return None
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise Refusal(INVALID_PARAMS, f"invalid params: {name} must be {_KINDS[kind]}, not {json_type(value)}")
    return value


_KINDS = {str: "a string", int: "an integer", list: "an array", dict: "an object"}


async def _read_text_file(session: "Session", params: dict) -> dict:
    path = _param(params, "path")
    _param(params, "line", int, required=False)
    _param(params, "limit", int, required=False)
    try:
        raw = await session.trial.sandbox.read_file(path, limit=MAX_READ_BYTES + 1)
    except (FileNotFoundError, IsADirectoryError):
        raise Refusal(RESOURCE_NOT_FOUND, f"{path}: no such file") from None
    except PermissionError as exc:
        raise Refusal(INTERNAL, str(exc)) from None
    if len(raw) > MAX_READ_BYTES:
        raise Refusal(INTERNAL, f"{path}: larger than {MAX_READ_BYTES} bytes, the most this client reads")
    data = raw.decode("utf-8", errors="replace")
    if params.get("line") or params.get("limit"):
        lines = data.splitlines(keepends=True)
        start = max(int(params.get("line") or 1) - 1, 0)
        end = start + int(params["limit"]) if params.get("limit") else None
        data = "".join(lines[start:end])
    await session.trial.events.emit(event("tool_call", "fs/read_text_file", path=path, chars=len(data)))
    return {"content": data}


async def _write_text_file(session: "Session", params: dict) -> dict | None:
    path, content = _param(params, "path"), _param(params, "content")
    try:
        await session.trial.sandbox.write_files([(path, content.encode(), False)])
    except PermissionError as exc:
        raise Refusal(INTERNAL, str(exc)) from None
    await session.trial.events.emit(event("tool_call", "fs/write_text_file", path=path, chars=len(content)))
    return None


class Terminal:
    """A command the agent started with terminal/create, run by sandbox.exec."""

    def __init__(self, session: "Session", command: str, cwd: str, env: dict[str, str], limit: int):
        self.command = command
        self.limit = limit
        self.output = bytearray()
        self.truncated = False
        remaining = max(session.deadline - time.monotonic(), 1.0)
        self.task = asyncio.create_task(
            session.trial.sandbox.exec(command, cwd=cwd, env=env, timeout=remaining, on_output=self._collect)
        )

    async def _collect(self, _stream: str, chunk: bytes) -> None:
        self.output.extend(chunk)
        if len(self.output) > self.limit:  # keep the end, as ACP asks
            del self.output[: len(self.output) - self.limit]
            self.truncated = True

    def exit_status(self) -> dict | None:
        if not self.task.done():
            return None
        if self.task.cancelled() or self.task.exception() is not None:
            return {"exitCode": None, "signal": "SIGKILL"}
        result = self.task.result()
        return (
            {"exitCode": None, "signal": "SIGKILL"}
            if result.timed_out
            else {"exitCode": result.exit_code, "signal": None}
        )

    def snapshot(self) -> dict:
        return {
            "output": bytes(self.output).decode("utf-8", errors="replace"),
            "truncated": self.truncated,
            "exitStatus": self.exit_status(),
        }

    async def kill(self) -> None:
        if not self.task.done():
            self.task.cancel()
        await asyncio.gather(self.task, return_exceptions=True)


def _terminal(session: "Session", params: dict) -> Terminal:
    terminal = session.terminals.get(_param(params, "terminalId"))
    if terminal is None:
        raise Refusal(RESOURCE_NOT_FOUND, f"no terminal {params['terminalId']}")
    return terminal


async def _terminal_create(session: "Session", params: dict) -> dict:
    _param(params, "command")
    _param(params, "cwd", str, required=False)
    _param(params, "outputByteLimit", int, required=False)
    args = [str(a) for a in _param(params, "args", list, required=False) or []]
    command = shlex.join([params["command"], *args]) if args else params["command"]
    env = {e["name"]: e["value"] for e in params.get("env") or []}
    limit = min(int(params.get("outputByteLimit") or TERMINAL_OUTPUT_BYTES), MAX_TERMINAL_OUTPUT_BYTES)
    terminal = Terminal(session, command, params.get("cwd") or "", env, max(limit, 0))
    terminal_id = f"term-{next(session.terminal_ids)}"
    session.terminals[terminal_id] = terminal
    return {"terminalId": terminal_id}


async def _terminal_output(session: "Session", params: dict) -> dict:
    return _terminal(session, params).snapshot()


async def _terminal_wait(session: "Session", params: dict) -> dict:
    terminal = _terminal(session, params)
    await asyncio.gather(terminal.task, return_exceptions=True)
    snapshot = terminal.snapshot()
    await session.trial.events.emit(
        event(
            "tool_call",
            "terminal",
            command=terminal.command,
            exit_status=snapshot["exitStatus"],
            output=snapshot["output"][-4096:],
        )
    )
    return snapshot["exitStatus"]


async def _terminal_kill(session: "Session", params: dict) -> dict | None:
    await _terminal(session, params).kill()
    return None


async def _terminal_release(session: "Session", params: dict) -> dict | None:
    await _terminal(session, params).kill()
    session.terminals.pop(params["terminalId"], None)
    return None


SERVED = {
    "session/request_permission": _permission,
    "fs/read_text_file": _read_text_file,
    "fs/write_text_file": _write_text_file,
    "terminal/create": _terminal_create,
    "terminal/output": _terminal_output,
    "terminal/wait_for_exit": _terminal_wait,
    "terminal/kill": _terminal_kill,
    "terminal/release": _terminal_release,
}
