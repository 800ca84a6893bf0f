"""kind = "acp": any Agent Client Protocol agent, driven over its stdio with JSON-RPC.

The agent runs inside the attempt's sandbox, so whatever tools of its own it
uses (Claude Code's Bash, Read, Edit, ...) act on the sandbox: an npm package
(`agent`, pinned by `version`) from the cached tools folder mounted read-only
at /opt/hemra/tools, or a `command` of the harness file's folder, mounted
read-only at /opt/hemra/harness. Sandboxes only run commands to completion,
so the two directions of the pipe travel differently: the agent's stdout is
read as it arrives (exec's on_output), and each message to the agent is
written as a numbered file into /tmp/hemra-acp/in, which a small bash relay
inside the sandbox feeds to the agent's stdin in order.

The exchange: initialize (with the fs and terminal client capabilities),
session/new (cwd: the task's working folder), session/prompt (the
instruction). session/update notifications become events;
session/request_permission is answered by the harness file's `permission`
policy; fs/* and terminal/* requests are served from the sandbox. At the
attempt's timeout the driver sends session/cancel, waits a few seconds for
the prompt to end, then kills the agent. The whole JSON-RPC transcript is
kept as the artifact /logs/agent/acp.jsonl (standard error as acp-stderr.txt),
stored by HEMRA directly, never written into the agent's sandbox. The agent
shares the sandbox with the message channel: a channel it broke ends the
attempt as a harness failure, never an infrastructure one. A stdout line longer
than MAX_LINE_BYTES is split into output, never parsed.

Whatever the agent sends is its doing, never an infrastructure failure. A message
that is not one HEMRA can take (not JSON, not an object, a response to an id HEMRA
never sent, a notification or request whose params are not of the schema's shape,
an over-long line) is recorded as an "error" event named "protocol" with the raw
line (escaped, cut at MAX_RAW_BYTES; the first MAX_BAD_MESSAGES, then a count),
and the conversation goes on: a request with bad params is answered with a
JSON-RPC error. An answer to HEMRA's own request outside the schema
(`session/new` without a string sessionId, a `session/prompt` result that is not
an object with a string stopReason, ...) ends the attempt as a harness failure
with that reason; the verifier still scores it.
"""

import asyncio
import itertools
import json
import shlex
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from services import envtemplate
from services.common import mcp
from services.executor import artifacts
from services.executor.artifacts import OwnLog
from services.executor.events import BadMessages, Lines, event, output_events
from services.executor.harnesses import mcp as mcp_servers
from services.executor.harnesses.base import (
    COMPLETED,
    HARNESS_FAILED,
    HARNESS_MOUNT,
    TIMED_OUT,
    HarnessDriver,
    HarnessResult,
    TrialContext,
)
from services.executor.harnesses.cli import install
from services.executor.harnesses.cli.base import AGENT_HOME, AGENT_TMP, DEFAULT_PATH, TOOLS_MOUNT
from services.executor.sandboxes import SandboxError
from services.executor.sandboxes.relay import endpoints_of

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
_TAIL_BYTES = 4096
#: Streamed message text logged in parts of this many characters; tool calls remembered until
#: they end, at most this many, each argument kept up to MAX_REMEMBERED_BYTES of JSON.
MAX_MESSAGE_CHARS = 256 * 1024
MAX_OPEN_TOOL_CALLS = 1000
MAX_REMEMBERED_BYTES = 64 * 1024
_CLIENT_INFO = {"name": "hemra", "title": "HEMRA", "version": "1"}
#: JSON-RPC error codes.
_INVALID_REQUEST, _METHOD_NOT_FOUND, _INVALID_PARAMS, _INTERNAL = -32600, -32601, -32602, -32603
_RESOURCE_NOT_FOUND = -32002


@dataclass
class Settings:
    """What an acp harness file says beyond the common keys."""

    package: str = ""
    command: list[str] = field(default_factory=list)
    permission: str = "allow"


def settings(harness) -> Settings:
    data = tomllib.loads(harness.source_text or "")
    command = list(harness.command)
    return Settings(
        package="" if command else harness.agent, command=command, permission=str(data.get("permission", "allow"))
    )


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


class AcpDriver(HarnessDriver):
    async def mounts(self, harness) -> dict[str, str]:
        config = settings(harness)
        if config.command:
            folder = Path(harness.source_path).parent
            if not folder.is_dir():
                raise SandboxError(f"harness {harness.harness_name}: its folder {folder} is gone")
            return {HARNESS_MOUNT: str(folder), **await mcp_servers.mounts(harness)}
        # JavaScript agents bring the host's node along: task images rarely have one.
        folder = await install.ensure(_tool_name(config.package), config.package, harness.agent_version, True)
        return {f"{TOOLS_MOUNT}/{_tool_name(config.package)}": str(folder), **await mcp_servers.mounts(harness)}

    def endpoints(self, harness) -> list[tuple[str, int]]:
        """An ACP agent calls its model wherever the `*_BASE_URL` variables its harness
        file names point (ANTHROPIC_BASE_URL for Claude's adapter): a sandbox without
        a network relays exactly those."""
        passed = envtemplate.pass_through(harness.env)
        return endpoints_of({name: url for name, url in sorted(passed.items()) if name.endswith("_BASE_URL")})

    async def run(self, trial: TrialContext) -> HarnessResult:
        config = settings(trial.harness)
        path = dict(trial.task.environment.env).get("PATH", DEFAULT_PATH)
        if config.command:
            argv, cwd, version = config.command, HARNESS_MOUNT, ""
        else:
            root = f"{TOOLS_MOUNT}/{_tool_name(config.package)}"
            folder = Path((await self.mounts(trial.harness))[root])
            argv = [f"{root}/node_modules/.bin/{_bin_name(folder, config.package)}"]
            cwd, version, path = "", _installed_version(folder, config.package), f"{root}/node/bin:{path}"
        session = Session(trial, config)
        return await session.run(argv, cwd, version, path)


class Session:
    """One agent process and its JSON-RPC connection."""

    def __init__(self, trial: TrialContext, config: Settings):
        self.trial = trial
        self.config = config
        self.deadline = time.monotonic() + trial.timeout
        self.started = time.monotonic()
        self._ids = itertools.count(1)
        self._sent = itertools.count(1)
        self._send_lock = asyncio.Lock()
        self._pending: dict[int, tuple[str, asyncio.Future]] = {}
        self._lines = Lines(MAX_LINE_BYTES)
        self._long_line = False  # pieces of an over-long line are coming
        self.bad = BadMessages(trial.events, "protocol")
        self._transcript = OwnLog("/logs/agent/acp.jsonl")
        self._stderr = OwnLog("/logs/agent/acp-stderr.txt")
        self._stderr_tail = bytearray()
        self._text: dict[str, list[str]] = {}
        self._text_chars = 0
        self._tools: dict[str, dict] = {}
        self._handlers: set[asyncio.Task] = set()
        self.terminals: dict[str, Terminal] = {}
        self.terminal_ids = itertools.count(1)
        self.process: asyncio.Task | None = None
        self.agent_version = ""
        self.servers = mcp_servers.servers(trial.harness)
        #: Values session/new carries (the MCP servers' variables), shown by name in the transcript.
        self._hidden: dict[str, str] = {}

    # -- the process ------------------------------------------------------------------------------

    async def run(self, argv: list[str], cwd: str, version: str, path: str) -> HarnessResult:
        trial = self.trial
        passed = envtemplate.pass_through(trial.harness.env)
        env = {"HOME": AGENT_HOME, "TMPDIR": AGENT_TMP, "PATH": path, "HEMRA_MODEL": trial.model, **passed}
        await trial.events.emit(
            event("status", "start", command=argv, env_names=sorted(passed), permission=self.config.permission)
        )
        self._hidden = {name: passed[name] for name in mcp.variables(self.servers) if len(passed.get(name, "")) >= 4}
        # Its MCP servers must start before it does: one that cannot is HEMRA's failure to prepare.
        try:
            await mcp_servers.check_started(trial, self.servers, env)
        except BaseException:
            self._transcript.close()
            self._stderr.close()
            raise
        budget = trial.timeout + CANCEL_GRACE_SECS + EXIT_GRACE_SECS
        await trial.sandbox.remove_path(CHANNEL)  # before the agent starts: messages may arrive at once
        self.process = asyncio.create_task(
            trial.sandbox.exec(_relay_script(argv), cwd=cwd, env=env, timeout=budget, on_output=self._on_output)
        )
        self.agent_version = version
        try:
            try:
                result = await self._converse()
            finally:
                await self._stop()
            await self.bad.close()
            await artifacts.keep(trial.events, self._transcript)
            await artifacts.keep(trial.events, self._stderr)
        finally:
            self._transcript.close()
            self._stderr.close()
        result.agent_version = (result.agent_version or self.agent_version)[:MAX_VERSION]
        return result

    async def _converse(self) -> HarnessResult:
        trial = self.trial
        try:
            init = await self.request(
                "initialize",
                {
                    "protocolVersion": PROTOCOL_VERSION,
                    "clientInfo": _CLIENT_INFO,
                    "clientCapabilities": {"fs": {"readTextFile": True, "writeTextFile": True}, "terminal": True},
                },
            )
            init = _object(init, "initialize")
            info = init.get("agentInfo") if isinstance(init.get("agentInfo"), dict) else {}
            self.agent_version = self.agent_version or str(info.get("version") or "")
            await trial.events.emit(
                event(
                    "status",
                    "initialize",
                    protocol_version=init.get("protocolVersion"),
                    agent=info,
                    pinned=trial.harness.agent_version,
                    version=self.agent_version,
                    capabilities=init.get("agentCapabilities") or {},
                )
            )
            passed = envtemplate.pass_through(trial.harness.env)
            servers = mcp.acp_servers(self.servers, passed)
            created = _object(
                await self.request(
                    "session/new", {"cwd": trial.task.environment.workdir or "/", "mcpServers": servers}
                ),
                "session/new",
            )
            session_id = created.get("sessionId")
            if not isinstance(session_id, str):
                raise OutsideSchema(f"the agent answered session/new with sessionId {_shown(session_id)}", created)
            offered = [m.get("modelId") for m in _objects((_dict(created.get("models"))).get("availableModels"))]
            if trial.model and trial.model in offered:  # unstable in ACP v1: only when the agent lists it
                await self.request("session/set_model", {"sessionId": session_id, "modelId": trial.model})
            await trial.events.emit(
                event(
                    "status",
                    "session",
                    session_id=session_id,
                    modes=[m.get("id") for m in _objects(_dict(created.get("modes")).get("availableModes"))],
                    models=offered,
                    model_set=bool(trial.model and trial.model in offered),
                )
            )
            prompt = [{"type": "text", "text": trial.task.instruction}]
            answered = await self.start_request("session/prompt", {"sessionId": session_id, "prompt": prompt})
            try:
                answer = _prompt_answer(await self._wait(answered, "session/prompt"))
            except TimeoutError:
                return await self._cancel(session_id, answered)
        except TimeoutError:
            return HarnessResult(TIMED_OUT, -1, f"the agent timed out after {trial.timeout:g} s before its prompt")
        except AgentExited as exc:
            return HarnessResult(HARNESS_FAILED, self._exit_code(), str(exc))
        except ChannelBroken as exc:
            await trial.events.emit(event("error", "acp", message=str(exc)))
            return HarnessResult(HARNESS_FAILED, -1, str(exc))
        except RemoteError as exc:
            await trial.events.emit(event("error", "acp", message=str(exc)))
            return HarnessResult(HARNESS_FAILED, 0, str(exc))
        except OutsideSchema as exc:
            await self.bad.add(str(exc), _raw(exc.raw))
            return HarnessResult(HARNESS_FAILED, 0, str(exc))
        except (KeyError, TypeError, AttributeError, ValueError) as exc:
            message = f"the agent answered outside the ACP schema: {exc!r}"
            await self.bad.add(message)
            return HarnessResult(HARNESS_FAILED, 0, message)
        await self._flush_text()
        return await self._ended(answer)

    async def _ended(self, answer: dict) -> HarnessResult:
        stop = answer["stopReason"]
        usage = _dict(answer.get("usage"))
        if usage:
            await self.trial.events.emit(
                event(
                    "usage",
                    "total",
                    time.monotonic() - self.started,
                    input_tokens=usage.get("inputTokens", 0),
                    output_tokens=usage.get("outputTokens", 0),
                    cache_read_input_tokens=usage.get("cachedReadTokens", 0),
                    cache_creation_input_tokens=usage.get("cachedWriteTokens", 0),
                    total_tokens=usage.get("totalTokens", 0),
                )
            )
        await self.trial.events.emit(event("status", "stop", stop_reason=stop))
        if stop == "cancelled":
            return HarnessResult(HARNESS_FAILED, 0, "the agent cancelled its turn")
        return HarnessResult(COMPLETED, 0)

    async def _cancel(self, session_id: str, answered: asyncio.Future) -> HarnessResult:
        """The attempt's time is up: session/cancel, a short wait for the turn to end, then the kill."""
        self.deadline = time.monotonic() + CANCEL_GRACE_SECS
        try:
            await self.notify("session/cancel", {"sessionId": session_id})
            stop = _prompt_answer(await self._wait(answered, "session/prompt"))["stopReason"]
        except (TimeoutError, AgentExited, RemoteError, ChannelBroken):
            stop = ""
        except OutsideSchema as exc:
            await self.bad.add(str(exc), _raw(exc.raw))
            stop = ""
        await self.trial.events.emit(event("status", "cancel", reason="timeout", stop_reason=stop, ended=bool(stop)))
        await self._flush_text()
        return HarnessResult(TIMED_OUT, -1, f"the agent timed out after {self.trial.timeout:g} s")

    async def _stop(self) -> None:
        """Close the agent's stdin; kill it if it does not exit (some adapters never do)."""
        for handler in list(self._handlers):
            handler.cancel()
        for terminal in list(self.terminals.values()):
            await terminal.kill()
        try:
            await self.trial.sandbox.write_files([(f"{CHANNEL}/in/close", b"", False)])
        except (SandboxError, OSError):
            pass
        done, _ = await asyncio.wait({self.process}, timeout=EXIT_GRACE_SECS)
        if not done:
            self.process.cancel()
        for line, whole in self._lines.close():  # a last line without its newline
            await self._receive(line, whole)
        try:
            result = await self.process
            await self.trial.events.emit(
                event(
                    "status",
                    "exit",
                    result.duration,
                    exit_code=result.exit_code,
                    timed_out=result.timed_out,
                    killed=False,
                )
            )
        except asyncio.CancelledError:
            await self.trial.events.emit(event("status", "exit", exit_code=-1, killed=True))

    def _exit_code(self) -> int:
        if self.process is not None and self.process.done() and not self.process.cancelled():
            return self.process.result().exit_code
        return -1

    # -- JSON-RPC ---------------------------------------------------------------------------------

    async def _send(self, message: dict) -> None:
        line = (
            json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "backslashreplace") + b"\n"
        )
        self._log("client->agent", message)
        async with self._send_lock:  # numbered files must appear in order
            try:
                await self.trial.sandbox.write_files([(f"{CHANNEL}/in/{next(self._sent):08d}", line, False)])
            except (OSError, SandboxError) as exc:  # the agent shares the folder: it may have broken it
                raise ChannelBroken(f"cannot write a message into the agent's channel {CHANNEL}: {exc}") from None

    async def request(self, method: str, params: dict) -> dict:
        return await self._wait(await self.start_request(method, params), method)

    async def start_request(self, method: str, params: dict) -> asyncio.Future:
        """Send a request; its answer's future (a RemoteError when the agent answers with an error)."""
        request_id = next(self._ids)
        future = asyncio.get_running_loop().create_future()
        self._pending[request_id] = (method, future)
        future.add_done_callback(lambda _: self._pending.pop(request_id, None))
        await self._send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        return future

    async def notify(self, method: str, params: dict) -> None:
        await self._send({"jsonrpc": "2.0", "method": method, "params": params})

    async def _wait(self, future: asyncio.Future, method: str) -> dict:
        remaining = self.deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError
        done, _ = await asyncio.wait({future, self.process}, timeout=remaining, return_when=asyncio.FIRST_COMPLETED)
        if future in done:
            return future.result()
        if self.process in done:
            code = self._exit_code()
            said = _last_line(bytes(self._stderr_tail).decode(errors="replace"))
            raise AgentExited(f"the agent exited {code} before answering {method}" + (f": {said}" if said else ""))
        raise TimeoutError

    async def _on_output(self, stream: str, chunk: bytes) -> None:
        if stream != "stdout":
            self._stderr.write(chunk)
            self._stderr_tail += chunk[-_TAIL_BYTES:]
            del self._stderr_tail[:-_TAIL_BYTES]
            await self.trial.events.emit(*output_events("stderr", chunk))
            return
        for line, whole in self._lines.feed(chunk):
            await self._receive(line, whole)

    async def _receive(self, line: bytes, whole: bool = True) -> None:
        if not whole:  # a piece of an over-long line: output, and one error for the line
            if not self._long_line:
                await self.bad.add(f"a line longer than {MAX_LINE_BYTES} bytes (kept as output, not read)", line)
            self._long_line = not line.endswith(b"\n")
        if not line.strip():
            return
        message, problem = None, "not JSON"
        if whole:
            try:
                message = json.loads(line)
            except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
                message, problem = None, f"not JSON ({type(exc).__name__}: {str(exc)[:200]})"
        if not isinstance(message, dict):
            self._log("agent->client", {"unparsed": line.decode(errors="replace"), "split": not whole})
            await self.trial.events.emit(*output_events("stdout", line.rstrip(b"\n")))
            if whole:
                why = problem if message is None else f"not a JSON object ({_json_type(message)})"
                await self.bad.add(f"a message that is {why}", line.rstrip(b"\r\n"))
            return
        self._log("agent->client", message)
        try:
            await self._dispatch(message)
        except (KeyError, TypeError, AttributeError, ValueError, RecursionError) as exc:
            # Data of shapes the schema does not allow, wherever it was read.
            await self.bad.add(f"a message outside the ACP schema: {type(exc).__name__}: {exc}"[:500], line)

    async def _dispatch(self, message: dict) -> None:
        method = message.get("method")
        if "method" not in message:
            request_id = message.get("id")
            known = isinstance(request_id, int) and not isinstance(request_id, bool)
            method, future = self._pending.get(request_id, ("", None)) if known else ("", None)
            if future is None:
                await self.bad.add(f"a response to id {_shown(request_id)}, which HEMRA never sent", _raw(message))
                return
            if future.done():
                return
            if "error" in message:
                error = message["error"] if isinstance(message["error"], dict) else {}
                future.set_exception(
                    RemoteError(
                        f"the agent answered {method} with an error: "
                        f"{_shown(error.get('message', ''))} (code {_shown(error.get('code'))})"
                    )
                )
            else:
                future.set_result(message.get("result"))
            return
        if not isinstance(method, str):
            await self.bad.add(f"a message whose method is {_json_type(method)}, not a string", _raw(message))
            if "id" in message:
                await self._refuse(message.get("id"), _INVALID_REQUEST, "method must be a string")
            return
        if "id" not in message:
            if method == "session/update":
                params = message.get("params")
                update = params.get("update") if isinstance(params, dict) else None
                if not isinstance(update, dict):
                    await self.bad.add("a session/update whose params.update is not an object", _raw(message))
                    return
                await self._update(update)
            return
        if not _valid_id(message["id"]):
            await self.bad.add(f"a request whose id is {_json_type(message['id'])}", _raw(message))
            await self._refuse(None, _INVALID_REQUEST, "id must be a string, a number or null")
            return
        handler = asyncio.create_task(self._answer(message))
        self._handlers.add(handler)
        handler.add_done_callback(self._handlers.discard)

    async def _answer(self, message: dict) -> None:
        method, params = message["method"], message.get("params")
        params = {} if params is None else params
        serve = _SERVED.get(method)
        try:
            if serve is None:
                raise _Refusal(_METHOD_NOT_FOUND, f"method not found: {method}")
            if not isinstance(params, dict):
                raise _Refusal(_INVALID_PARAMS, f"invalid params for {method}: an object is required")
            result = await serve(self, params)
            reply = {"jsonrpc": "2.0", "id": message["id"], "result": result}
        except _Refusal as refusal:
            reply = {"jsonrpc": "2.0", "id": message["id"], "error": {"code": refusal.code, "message": str(refusal)}}
            if refusal.code == _INVALID_PARAMS:
                await self.bad.add(str(refusal), _raw(message))
        except (KeyError, TypeError, ValueError, AttributeError, RecursionError) as exc:
            problem = f"invalid params for {method}: {exc!r}"[:500]
            reply = {"jsonrpc": "2.0", "id": message["id"], "error": {"code": _INVALID_PARAMS, "message": problem}}
            await self.bad.add(problem, _raw(message))
        except Exception as exc:  # whatever broke, the agent must not wait for an answer forever
            reply = {
                "jsonrpc": "2.0",
                "id": message["id"],
                "error": {"code": _INTERNAL, "message": f"{method} failed: {exc}"},
            }
        try:
            await self._send(reply)
        except ChannelBroken as exc:  # the conversation notices when its own messages fail
            await self.trial.events.emit(event("error", "acp", message=str(exc)))

    async def _refuse(self, request_id, code: int, message: str) -> None:
        try:
            await self._send({"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}})
        except ChannelBroken as exc:
            await self.trial.events.emit(event("error", "acp", message=str(exc)))

    def _log(self, direction: str, message: dict) -> None:
        entry = {"t": round(time.monotonic() - self.started, 3), "dir": direction, "msg": message}
        try:
            line = json.dumps(entry, ensure_ascii=False)
        except (ValueError, RecursionError):  # too deeply nested to write back
            line = json.dumps({**entry, "msg": {"unwritable": True}})
        for name, value in self._hidden.items():  # the MCP servers' variables, by name only
            line = line.replace(json.dumps(value, ensure_ascii=False)[1:-1], "${" + name + "}")
        # Lone surrogates (JSON's "\ud800") as \udXXX: still the same JSON string.
        self._transcript.write(line.encode("utf-8", "backslashreplace") + b"\n")

    # -- session/update into events --------------------------------------------------------------

    async def _update(self, update: dict) -> None:
        kind = update.get("sessionUpdate", "")
        chunk = _CHUNKS.get(kind)
        if chunk is not None:
            content = _dict(update.get("content"))
            if content.get("type") == "text":
                piece = str(content.get("text", ""))
                self._text.setdefault(chunk, []).append(piece)
                self._text_chars += len(piece)
                if self._text_chars >= MAX_MESSAGE_CHARS:  # a long message is logged in parts
                    await self._flush_text()
            return
        await self._flush_text()
        emit = self.trial.events.emit
        if kind in ("tool_call", "tool_call_update"):
            await self._tool_update(update)
        elif kind == "usage_update":
            cost = _dict(update.get("cost"))
            await emit(
                event(
                    "usage",
                    "context",
                    used=update.get("used", 0),
                    size=update.get("size", 0),
                    cost_usd=cost.get("amount", 0) if cost.get("currency", "USD") == "USD" else 0,
                    cost=cost,
                )
            )
        elif kind == "plan":
            await emit(event("plan", "", entries=update.get("entries") or []))
        elif kind in ("current_mode_update", "session_info_update", "config_option_update"):
            await emit(event("status", kind, **{k: v for k, v in update.items() if k != "sessionUpdate"}))

    async def _tool_update(self, update: dict) -> None:
        """A tool call is logged once its arguments are known (agents often announce it first with
        none), and its result when its status ends."""
        call = self._tools.setdefault(str(update.get("toolCallId", "")), {"emitted": False})
        call.update({k: _small(update[k]) for k in ("title", "kind", "rawInput", "locations") if update.get(k)})
        status = update.get("status", "")
        ended = status in ("completed", "failed")
        if ended:
            self._tools.pop(str(update.get("toolCallId", "")), None)
        while len(self._tools) > MAX_OPEN_TOOL_CALLS:  # calls that never end are forgotten, oldest first
            self._tools.pop(next(iter(self._tools)))
        if not call["emitted"] and (call.get("rawInput") or ended):
            call["emitted"] = True
            await self.trial.events.emit(
                event(
                    "tool_call",
                    call.get("kind") or "other",
                    id=update.get("toolCallId", ""),
                    title=call.get("title", ""),
                    arguments=call.get("rawInput") or {},
                    locations=call.get("locations") or [],
                )
            )
        if ended:
            await self.trial.events.emit(
                event(
                    "tool_result",
                    call.get("kind") or "other",
                    id=update.get("toolCallId", ""),
                    status=status,
                    is_error=status == "failed",
                    output=_content_text(update.get("content")),
                    raw_output=update.get("rawOutput"),
                )
            )

    async def _flush_text(self) -> None:
        """Streamed chunks of one message become one message event."""
        for role, parts in list(self._text.items()):
            if parts:
                await self.trial.events.emit(event("message", role, role=role, text="".join(parts)))
        self._text.clear()
        self._text_chars = 0


class _Refusal(Exception):
    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code = code


# -- what the client serves to the agent -----------------------------------------------------------


async def _permission(session: Session, params: dict) -> dict:
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
        raise _Refusal(_INVALID_PARAMS, f"invalid params: {name} must be {_KINDS[kind]}, not {_json_type(value)}")
    return value


_KINDS = {str: "a string", int: "an integer", list: "an array", dict: "an object"}


async def _read_text_file(session: Session, params: dict) -> dict:
    path = _param(params, "path")
    _param(params, "line", int, required=False)
    _param(params, "limit", int, required=False)
    try:
        raw = await session.trial.sandbox.read_file(path, limit=MAX_READ_BYTES + 1)
    except (FileNotFoundError, IsADirectoryError):
        raise _Refusal(_RESOURCE_NOT_FOUND, f"{path}: no such file") from None
    except PermissionError as exc:
        raise _Refusal(_INTERNAL, str(exc)) from None
    if len(raw) > MAX_READ_BYTES:
        raise _Refusal(_INTERNAL, f"{path}: larger than {MAX_READ_BYTES} bytes, the most this client reads")
    data = raw.decode("utf-8", errors="replace")
    if params.get("line") or params.get("limit"):
        lines = data.splitlines(keepends=True)
        start = max(int(params.get("line") or 1) - 1, 0)
        end = start + int(params["limit"]) if params.get("limit") else None
        data = "".join(lines[start:end])
    await session.trial.events.emit(event("tool_call", "fs/read_text_file", path=path, chars=len(data)))
    return {"content": data}


async def _write_text_file(session: Session, params: dict) -> dict | None:
    path, content = _param(params, "path"), _param(params, "content")
    try:
        await session.trial.sandbox.write_files([(path, content.encode(), False)])
    except PermissionError as exc:
        raise _Refusal(_INTERNAL, str(exc)) from None
    await session.trial.events.emit(event("tool_call", "fs/write_text_file", path=path, chars=len(content)))
    return None


class Terminal:
    """A command the agent started with terminal/create, run by sandbox.exec."""

    def __init__(self, session: Session, command: str, cwd: str, env: dict[str, str], limit: int):
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


def _terminal(session: Session, params: dict) -> Terminal:
    terminal = session.terminals.get(_param(params, "terminalId"))
    if terminal is None:
        raise _Refusal(_RESOURCE_NOT_FOUND, f"no terminal {params['terminalId']}")
    return terminal


async def _terminal_create(session: Session, params: dict) -> dict:
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


async def _terminal_output(session: Session, params: dict) -> dict:
    return _terminal(session, params).snapshot()


async def _terminal_wait(session: Session, params: dict) -> dict:
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


async def _terminal_kill(session: Session, params: dict) -> dict | None:
    await _terminal(session, params).kill()
    return None


async def _terminal_release(session: Session, params: dict) -> dict | None:
    await _terminal(session, params).kill()
    session.terminals.pop(params["terminalId"], None)
    return None


_SERVED = {
    "session/request_permission": _permission,
    "fs/read_text_file": _read_text_file,
    "fs/write_text_file": _write_text_file,
    "terminal/create": _terminal_create,
    "terminal/output": _terminal_output,
    "terminal/wait_for_exit": _terminal_wait,
    "terminal/kill": _terminal_kill,
    "terminal/release": _terminal_release,
}
_CHUNKS = {"agent_message_chunk": "assistant", "agent_thought_chunk": "thinking", "user_message_chunk": "user"}


# -- helpers ---------------------------------------------------------------------------------------


def _relay_script(argv: list[str]) -> str:
    """Bash that feeds /tmp/hemra-acp/in/<n> to the agent's stdin, in order, until in/close appears.

    A message file counts once it is whole: not empty and ending in a newline
    (each message is one line), so a file caught half-written waits a poll.
    It polls every 20 ms, and every 100 ms after a second without messages."""
    return f"""set -u
CH={CHANNEL}
mkdir -p "$CH/in" {AGENT_HOME} {AGENT_TMP} && mkfifo "$CH/stdin" || exit 125
relay() {{
  local n=1 idle=0 f
  while :; do
    printf -v f '%s/in/%08d' "$CH" "$n"
    if [ -s "$f" ] && [ -z "$(tail -c 1 "$f")" ]; then
      cat "$f" && rm -f "$f" && n=$((n + 1)) && idle=0 || return
    elif [ -e "$CH/in/close" ]; then
      return
    elif [ "$idle" -lt 50 ]; then
      sleep 0.02; idle=$((idle + 1))
    else
      sleep 0.1
    fi
  done
}}
relay > "$CH/stdin" &
relay_pid=$!
{shlex.join(argv)} < "$CH/stdin"
code=$?
kill "$relay_pid" 2>/dev/null
exit "$code"
"""


def _tool_name(package: str) -> str:
    """A folder name for an npm package: @scope/name -> scope+name."""
    return mcp.tool_folder(package)


def _package_json(folder: Path, package: str) -> dict:
    try:
        return json.loads((folder / "node_modules" / package / "package.json").read_text())
    except (OSError, ValueError):
        raise SandboxError(f"{package} in {folder} has no readable package.json") from None


def _bin_name(folder: Path, package: str) -> str:
    binary = _package_json(folder, package).get("bin")
    if isinstance(binary, str):
        return package.rsplit("/", 1)[-1]
    if isinstance(binary, dict) and binary:
        return next(iter(binary))
    raise SandboxError(f"{package} declares no program (bin) to run as an ACP agent")


def _installed_version(folder: Path, package: str) -> str:
    return str(_package_json(folder, package).get("version") or "")


def _dict(value) -> dict:
    return value if isinstance(value, dict) else {}


def _objects(value) -> list[dict]:
    """The objects of a list the schema says holds objects (anything else: none)."""
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def _object(result, method: str) -> dict:
    if not isinstance(result, dict):
        raise OutsideSchema(f"the agent answered {method} with {_json_type(result)}, not an object", result)
    return result


def _prompt_answer(result) -> dict:
    answer = _object(result, "session/prompt")
    if not isinstance(answer.get("stopReason"), str):
        raise OutsideSchema(
            f"the agent answered session/prompt with stopReason {_shown(answer.get('stopReason'))}", answer
        )
    return answer


def _valid_id(value) -> bool:
    return value is None or (isinstance(value, str | int | float) and not isinstance(value, bool))


def _json_type(value) -> str:
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean", type(None): "null"}
    return names.get(type(value), "a number")


def _shown(value) -> str:
    """A value the agent sent, for a message: its JSON, short."""
    return _raw(value)[:100]


def _raw(value) -> str:
    """A value the agent sent, as JSON (for the error event's raw text)."""
    try:
        return json.dumps(value, ensure_ascii=False)[:MAX_REMEMBERED_BYTES]
    except (ValueError, RecursionError):
        return repr(value)[:MAX_REMEMBERED_BYTES]


def _small(value):
    """`value`, or a stand-in when its JSON is longer than MAX_REMEMBERED_BYTES."""
    size = len(json.dumps(value, ensure_ascii=False, default=str))
    return value if size <= MAX_REMEMBERED_BYTES else {"truncated": True, "json_chars": size}


def _content_text(content) -> str:
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


def _last_line(said: str, limit: int = 300) -> str:
    lines = [line for line in said.strip().splitlines() if line.strip()]
    return lines[-1][:limit] if lines else ""
