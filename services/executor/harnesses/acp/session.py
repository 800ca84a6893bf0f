"""One agent process: started in the sandbox, its conversation, and its session/update
notifications turned into events."""

import asyncio
import itertools
import time
from typing import TYPE_CHECKING

from hemra.services import envtemplate
from hemra.services.common import mcp
from hemra.services.executor import artifacts
from hemra.services.executor.artifacts import OwnLog
from hemra.services.executor.events import BadMessages, Lines, event
from hemra.services.executor.harnesses import mcp as mcp_servers
from hemra.services.executor.harnesses.acp.channel import Channel, relay_script
from hemra.services.executor.harnesses.acp.protocol import (
    CANCEL_GRACE_SECS,
    CHANNEL,
    EXIT_GRACE_SECS,
    MAX_LINE_BYTES,
    MAX_MESSAGE_CHARS,
    MAX_OPEN_TOOL_CALLS,
    MAX_VERSION,
    PROTOCOL_VERSION,
    AgentExited,
    ChannelBroken,
    OutsideSchema,
    RemoteError,
    content_text,
    dict_of,
    object_of,
    objects,
    prompt_answer,
    raw_json,
    shown,
    small,
)
from hemra.services.executor.harnesses.acp.served import Terminal
from hemra.services.executor.harnesses.base import (
    COMPLETED,
    HARNESS_FAILED,
    TIMED_OUT,
    HarnessResult,
    TrialContext,
)
from hemra.services.executor.harnesses.cli.base import AGENT_HOME, AGENT_TMP
from hemra.services.executor.sandboxes import SandboxError

if TYPE_CHECKING:
    from hemra.services.executor.harnesses.acp.driver import Settings

_CLIENT_INFO = {"name": "hemra", "title": "HEMRA", "version": "1"}
_CHUNKS = {"agent_message_chunk": "assistant", "agent_thought_chunk": "thinking", "user_message_chunk": "user"}


class Session(Channel):
    """One agent process and its JSON-RPC connection."""

    def __init__(self, trial: TrialContext, config: "Settings"):
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
            trial.sandbox.exec(relay_script(argv), cwd=cwd, env=env, timeout=budget, on_output=self._on_output)
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
            await self._initialize()
            session_id = await self._new_session()
            prompt = [{"type": "text", "text": trial.task.instruction}]
            answered = await self.start_request("session/prompt", {"sessionId": session_id, "prompt": prompt})
            try:
                answer = prompt_answer(await self._wait(answered, "session/prompt"))
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
            await self.bad.add(str(exc), raw_json(exc.raw))
            return HarnessResult(HARNESS_FAILED, 0, str(exc))
        except (KeyError, TypeError, AttributeError, ValueError) as exc:
            message = f"the agent answered outside the ACP schema: {exc!r}"
            await self.bad.add(message)
            return HarnessResult(HARNESS_FAILED, 0, message)
        await self._flush_text()
        return await self._ended(answer)

    async def _initialize(self) -> None:
        """initialize: the client's capabilities out, the agent's name and version in."""
        trial = self.trial
        init = await self.request(
            "initialize",
            {
                "protocolVersion": PROTOCOL_VERSION,
                "clientInfo": _CLIENT_INFO,
                "clientCapabilities": {"fs": {"readTextFile": True, "writeTextFile": True}, "terminal": True},
            },
        )
        init = object_of(init, "initialize")
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

    async def _new_session(self) -> str:
        """session/new with the MCP servers, the model set when the agent offers it; its id."""
        trial = self.trial
        passed = envtemplate.pass_through(trial.harness.env)
        servers = mcp.acp_servers(self.servers, passed)
        created = object_of(
            await self.request("session/new", {"cwd": trial.task.environment.workdir or "/", "mcpServers": servers}),
            "session/new",
        )
        session_id = created.get("sessionId")
        if not isinstance(session_id, str):
            raise OutsideSchema(f"the agent answered session/new with sessionId {shown(session_id)}", created)
        offered = [m.get("modelId") for m in objects((dict_of(created.get("models"))).get("availableModels"))]
        if trial.model and trial.model in offered:  # unstable in ACP v1: only when the agent lists it
            await self.request("session/set_model", {"sessionId": session_id, "modelId": trial.model})
        await trial.events.emit(
            event(
                "status",
                "session",
                session_id=session_id,
                modes=[m.get("id") for m in objects(dict_of(created.get("modes")).get("availableModes"))],
                models=offered,
                model_set=bool(trial.model and trial.model in offered),
            )
        )
        return session_id

    async def _ended(self, answer: dict) -> HarnessResult:
        stop = answer["stopReason"]
        usage = dict_of(answer.get("usage"))
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
            stop = prompt_answer(await self._wait(answered, "session/prompt"))["stopReason"]
        except (TimeoutError, AgentExited, RemoteError, ChannelBroken):
            stop = ""
        except OutsideSchema as exc:
            await self.bad.add(str(exc), raw_json(exc.raw))
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

    # -- session/update into events --------------------------------------------------------------

    async def _update(self, update: dict) -> None:
        kind = update.get("sessionUpdate", "")
        chunk = _CHUNKS.get(kind)
        if chunk is not None:
            content = dict_of(update.get("content"))
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
            cost = dict_of(update.get("cost"))
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
        call.update({k: small(update[k]) for k in ("title", "kind", "rawInput", "locations") if update.get(k)})
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
                    output=content_text(update.get("content")),
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
