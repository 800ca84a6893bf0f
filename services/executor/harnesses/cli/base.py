"""What every agent CLI driver shares: the tool mount, the agent's home, the run, the stream.

An agent's CLI runs inside the attempt's sandbox, from its cached npm folder
mounted read-only at /opt/hemra/tools/<agent>, in the task's working folder,
with a fresh HOME, stdin closed, and only the harness's named variables plus
the agent's own offline switches. Its JSON event stream becomes events while
it runs; the raw stream is kept as the artifact /logs/agent/<agent>.jsonl (and
standard error as <agent>-stderr.txt), stored by HEMRA directly, never written
into the agent's sandbox. A stream line longer than MAX_LINE_BYTES is split
into output events, never parsed.
"""

import abc
import json
import re
import shlex
import time
from dataclasses import dataclass, field

from hemra.services import envtemplate
from hemra.services.common.mcp import TOOLS_MOUNT  # one home: the planner renders MCP servers' paths with it
from hemra.services.executor import artifacts
from hemra.services.executor.artifacts import OwnLog
from hemra.services.executor.events import Lines, event, output_events, text
from hemra.services.executor.harnesses import mcp as mcp_servers
from hemra.services.executor.harnesses.base import (
    COMPLETED,
    HARNESS_FAILED,
    TIMED_OUT,
    HarnessDriver,
    HarnessResult,
    TrialContext,
)
from hemra.services.executor.harnesses.cli import install
from hemra.services.executor.sandboxes.relay import endpoints_of

#: The agent's HOME and TMPDIR: fresh for each attempt, outside the task's folders and artifacts.
AGENT_HOME = "/tmp/hemra-agent/home"
AGENT_TMP = "/tmp/hemra-agent/tmp"
#: Retries of a failing model call: enough for a blip, few enough that a broken run ends soon.
MAX_RETRIES = 1
VERSION_TIMEOUT_SECS = 60.0
DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
_VERSION = re.compile(r"\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.-]+)?")
#: Longest line of the agent's stream parsed as JSON; a longer one is split into output.
MAX_LINE_BYTES = 8 * 1024 * 1024
#: Longest agent version kept.
MAX_VERSION = 200
#: The end of standard error kept for the error message.
_TAIL_BYTES = 4096


@dataclass
class Stream(abc.ABC):
    """One agent's JSON event stream turned into HEMRA events; subclasses read their agent's lines."""

    agent: str
    #: Why the run failed although the CLI may exit 0 (is_error, turn.failed, an error stop).
    failure: str = ""
    #: The version the stream says ran, when it says so.
    version: str = ""
    #: The last text the agent said.
    final_text: str = ""
    _lines: Lines = field(default_factory=lambda: Lines(MAX_LINE_BYTES), repr=False)

    def feed(self, chunk: bytes) -> list:
        """Events for the complete lines in `chunk` (the rest waits for the next chunk)."""
        return [e for line, whole in self._lines.feed(chunk) for e in self._line(line, whole)]

    def close(self) -> list:
        return [e for line, whole in self._lines.close() for e in self._line(line, whole)]

    def _line(self, raw: bytes, whole: bool = True) -> list:
        if not whole:  # a piece of a line too long to parse
            return output_events(self.agent, raw, split=True)
        line = raw.strip()
        if not line:
            return []
        try:
            data = json.loads(line)
        except (ValueError, RecursionError):
            data = None
        if not isinstance(data, dict):
            return output_events(self.agent, line)
        try:
            return self.translate(data)
        except (KeyError, TypeError, AttributeError, ValueError) as exc:  # a shape we do not know
            return output_events(self.agent, line, note=f"unreadable event: {exc!r}")

    @abc.abstractmethod
    def translate(self, data: dict) -> list:
        """HEMRA events for one decoded line."""


class CliDriver(HarnessDriver):
    """Subclasses name the npm package and binary, and build the command, files and environment."""

    agent: str
    package: str
    binary: str
    #: Agents written in JavaScript bring the host's node along (task images rarely have one).
    needs_node = False

    @property
    def tool_root(self) -> str:
        return f"{TOOLS_MOUNT}/{self.agent}"

    @property
    def executable(self) -> str:
        return f"{self.tool_root}/node_modules/.bin/{self.binary}"

    async def mounts(self, harness) -> dict[str, str]:
        folder = await install.ensure(self.agent, self.package, harness.agent_version, self.needs_node)
        return {self.tool_root: str(folder), **await mcp_servers.mounts(harness)}

    def endpoints(self, harness) -> list[tuple[str, int]]:
        return endpoints_of(self.base_urls(envtemplate.pass_through(harness.env), harness.model))

    @abc.abstractmethod
    def base_urls(self, passed: dict[str, str], model: str) -> dict[str, str]:
        """The model API base URLs the agent will call ({where it comes from: URL})."""

    @abc.abstractmethod
    def command(self, trial: TrialContext, passed: dict[str, str]) -> list[str]:
        """The CLI's argv, the instruction included."""

    def environment(self, trial: TrialContext, passed: dict[str, str]) -> dict[str, str]:
        """The agent's own switches (offline, retries); the named variables are added after."""
        return {}

    def files(self, trial: TrialContext, passed: dict[str, str]) -> list[tuple[str, bytes, bool]]:
        """Configuration files to write into the agent's HOME before it starts."""
        return []

    @abc.abstractmethod
    def stream(self) -> Stream:
        """A fresh parser of this agent's stream."""

    async def run(self, trial: TrialContext) -> HarnessResult:
        deadline = time.monotonic() + trial.timeout
        passed = envtemplate.pass_through(trial.harness.env)
        env = {"HOME": AGENT_HOME, "TMPDIR": AGENT_TMP, **self.environment(trial, passed), **passed}
        if self.needs_node:
            path = dict(trial.task.environment.env).get("PATH", DEFAULT_PATH)
            env["PATH"] = f"{self.tool_root}/node/bin:{path}"
        await trial.sandbox.write_files(self.files(trial, passed))
        probe = await trial.sandbox.exec(
            f"mkdir -p {AGENT_HOME} {AGENT_TMP} && {shlex.quote(self.executable)} --version </dev/null",
            env=env,
            timeout=min(VERSION_TIMEOUT_SECS, trial.timeout),
        )
        version = _version(probe.stdout + b"\n" + probe.stderr) if probe.exit_code == 0 else ""
        await trial.events.emit(
            event(
                "status",
                "agent",
                probe.duration,
                agent=self.agent,
                pinned=trial.harness.agent_version,
                version=version,
                model=trial.model,
                env_names=sorted(passed),
            )
        )
        if probe.timed_out or probe.exit_code != 0:
            said = text(probe.stderr or probe.stdout).strip()
            await trial.events.emit(event("error", self.agent, message=f"{self.binary} --version failed: {said}"))
            if probe.timed_out:
                return HarnessResult(TIMED_OUT, -1, f"{self.binary} --version timed out", version)
            return HarnessResult(
                HARNESS_FAILED,
                probe.exit_code,
                f"{self.binary} --version exited {probe.exit_code}: {_last_line(said)}",
                version,
            )
        # Its MCP servers must start before it does: one that cannot is HEMRA's failure to prepare.
        await mcp_servers.check_started(trial, mcp_servers.servers(trial.harness), env)
        return await self._run_agent(trial, env, passed, version, deadline)

    async def _run_agent(self, trial, env, passed, version, deadline) -> HarnessResult:
        stream = self.stream()
        stdout = OwnLog(f"/logs/agent/{self.agent}.jsonl")
        stderr, tails = OwnLog(f"/logs/agent/{self.agent}-stderr.txt"), {"stdout": bytearray(), "stderr": bytearray()}

        async def on_output(name: str, chunk: bytes) -> None:
            (stdout if name == "stdout" else stderr).write(chunk)
            tail = tails[name]
            tail += chunk[-_TAIL_BYTES:]
            del tail[:-_TAIL_BYTES]
            if name == "stdout":
                await trial.events.emit(*stream.feed(chunk))
            else:
                await trial.events.emit(*output_events("stderr", chunk))

        try:
            argv = self.command(trial, passed)
            await trial.events.emit_own(event("status", "start", command=_named(argv[:-1], passed) + ["<instruction>"]))
            remaining = max(deadline - time.monotonic(), 1.0)
            result = await trial.sandbox.exec(
                shlex.join(argv) + " </dev/null", env=env, timeout=remaining, on_output=on_output
            )
            await trial.events.emit(*stream.close())
            await artifacts.keep(trial.events, stdout)
            await artifacts.keep(trial.events, stderr)
        finally:
            stdout.close()
            stderr.close()
        version = (stream.version or version)[:MAX_VERSION]  # the stream's is the agent's to say
        await trial.events.emit_own(
            event(
                "status",
                "exit",
                result.duration,
                exit_code=result.exit_code,
                timed_out=result.timed_out,
                version=version,
            )
        )
        if result.timed_out:
            return HarnessResult(TIMED_OUT, -1, f"{self.binary} timed out after {remaining:.0f} s", version)
        if result.exit_code != 0:
            why = stream.failure or _last_line(text(bytes(tails["stderr"]))) or _last_line(text(bytes(tails["stdout"])))
            return HarnessResult(
                HARNESS_FAILED, result.exit_code, f"{self.binary} exited {result.exit_code}: {why}", version
            )
        if stream.failure:
            return HarnessResult(HARNESS_FAILED, 0, stream.failure, version)
        return HarnessResult(COMPLETED, 0, "", version)


def _named(argv: list[str], passed: dict[str, str]) -> list[str]:
    """argv as recorded: the named variables' values (base URLs given as flags) shown by name."""

    def hide(arg: str) -> str:
        for name, value in passed.items():
            if len(value) >= 4:
                arg = arg.replace(value, "${" + name + "}")
        return arg

    return [hide(arg) for arg in argv]


def _version(output: bytes) -> str:
    found = _VERSION.search(output.decode(errors="replace"))
    return found.group(0) if found else ""


def _last_line(said: str, limit: int = 300) -> str:
    lines = [line for line in said.strip().splitlines() if line.strip()]
    return lines[-1][:limit] if lines else ""
