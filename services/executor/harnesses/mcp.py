"""A harness's MCP servers, started once by HEMRA inside the sandbox before its agent starts.

The agents start their stdio servers themselves and say little when one fails
(Claude Code marks it "failed" and goes on without its tools; Codex prints a
line). So before the agent runs, HEMRA starts each stdio server in the fresh
sandbox, with the agent's environment, sends it MCP's `initialize` and waits
for the answer. A server that does not answer is an infrastructure failure
(McpServerFailed): the agent has not run yet, so nothing it did can be the
cause. Its standard error is kept as the artifact
/logs/agent/mcp-<name>-stderr.txt and as output events. streamable-http and
sse servers are the agent's to reach; HEMRA does not dial them. A harness that
declares servers has its file's folder mounted read-only at /opt/hemra/harness,
so a server can be a script kept beside the harness file; a server from npm
(`package`, `version`) is installed once into the tools cache, like the agent
CLIs, and mounted read-only with a node to run it.
"""

import json
import shlex
from pathlib import Path

from hemra.services.common import mcp
from hemra.services.executor import artifacts
from hemra.services.executor.artifacts import OwnLog
from hemra.services.executor.events import event, output_events, text
from hemra.services.executor.harnesses.base import HARNESS_MOUNT, TrialContext
from hemra.services.executor.harnesses.cli import install
from hemra.services.executor.sandboxes import SandboxError

STARTUP_TIMEOUT_SECS = 30.0
#: MCP's initialize, as a client sends it first.
_INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "hemra", "version": "1"}},
}
#: Starts the server on two FIFOs, sends initialize, prints the first line that answers it, then
#: stops the server (many never exit on their own). The server's stderr is the exec's.
_PROBE = """set -u
dir=$(mktemp -d /tmp/hemra-mcp.XXXXXX)
mkfifo "$dir/in" "$dir/out"
%(command)s <"$dir/in" >"$dir/out" &
pid=$!
exec 4>"$dir/in" 5<"$dir/out"
printf '%%s\\n' "$HEMRA_MCP_INITIALIZE" >&4
code=1
while IFS= read -r -t %(timeout)d line <&5; do
  case "$line" in *'"id"'*) printf '%%s\\n' "$line"; code=0; break;; esac
done
kill "$pid" 2>/dev/null
rm -rf "$dir"
exit "$code"
"""


class McpServerFailed(SandboxError):
    """A declared MCP server did not start (an infrastructure failure, with its stderr kept)."""


async def mounts(harness) -> dict[str, str]:
    """What the harness's MCP servers need inside the sandbox, read-only: the harness file's
    folder at HARNESS_MOUNT (a server may be a script beside the file), and each npm server's
    package, installed once into the tools cache with a node to run it.

    Raises:
        SandboxError: the folder is gone, or npm could not install a package (InstallError).
    """
    declared = servers(harness)
    if not declared:
        return {}
    found = {}
    if harness.source_path:
        folder = Path(harness.source_path).parent
        if not folder.is_dir():
            raise SandboxError(f"harness {harness.harness_name}: its folder {folder} is gone")
        found[HARNESS_MOUNT] = str(folder)
    for server in declared:
        if server.package:
            name = mcp.tool_folder(server.package)
            found[server.tool_root] = str(await install.ensure(name, server.package, server.version, True))
    return found


def servers(harness) -> list[mcp.McpServer]:
    """The servers the harness declares (its file was checked when the run was planned)."""
    return mcp.declared(harness.source_text)


async def check_started(trial: TrialContext, declared: list[mcp.McpServer], env: dict[str, str]) -> None:
    """Start each stdio server once and wait for its initialize answer.

    Raises:
        McpServerFailed: a server that exited, hung or answered with an error.
    """
    for server in declared:
        if server.transport == "stdio":
            await _check(trial, server, env)


async def _check(trial: TrialContext, server: mcp.McpServer, env: dict[str, str]) -> None:
    timeout = max(1.0, min(STARTUP_TIMEOUT_SECS, trial.timeout))
    script = _PROBE % {"command": shlex.join(server.argv()), "timeout": int(timeout)}
    probe_env = {**env, "HEMRA_MCP_INITIALIZE": json.dumps(_INITIALIZE)}
    result = await trial.sandbox.exec(script, env=probe_env, timeout=timeout + 5)
    answer = _answer(result.stdout)
    if result.exit_code == 0 and isinstance(answer, dict) and isinstance(answer.get("result"), dict):
        info = answer["result"].get("serverInfo")
        await trial.events.emit(
            event("status", "mcp_server", result.duration, server=server.name, started=True, info=info or {})
        )
        return
    why = (
        f"answered initialize with an error: {json.dumps(answer.get('error'))[:300]}"
        if isinstance(answer, dict) and "error" in answer
        else "timed out before answering initialize"
        if result.timed_out
        else f"exited before answering initialize: {_last_line(text(result.stderr))}"
    )
    message = f"MCP server {server.name!r} did not start: {why}"
    log = OwnLog(f"/logs/agent/mcp-{server.name}-stderr.txt")
    log.write(result.stderr)
    await trial.events.emit(*output_events(f"mcp:{server.name}", result.stderr))
    await trial.events.emit(event("error", "mcp_server", server=server.name, message=message))
    await artifacts.keep(trial.events, log)
    raise McpServerFailed(message)


def _answer(stdout: bytes):
    line = stdout.strip().splitlines()[:1]
    try:
        return json.loads(line[0]) if line else None
    except ValueError:
        return None


def _last_line(said: str, limit: int = 300) -> str:
    lines = [line for line in said.strip().splitlines() if line.strip()]
    return lines[-1][:limit] if lines else "(nothing on stderr)"
