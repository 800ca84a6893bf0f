"""kind = "sdk": a Node program of the harness file's folder, built on an agent SDK from npm.

The program runs inside the attempt's sandbox, so the tools the SDK gives the
model (Claude Code's Bash and Write under the Claude Agent SDK, the function
tools a program defines under the OpenAI Agents SDK) act on the sandbox. The SDK
is installed once per version into the tools cache, together with HEMRA's
TypeScript harness client (clients/harness-ts, packed) and the host's node; the
cached folder's node_modules is mounted read-only at /opt/hemra/node_modules,
beside the harness folder at /opt/hemra/harness, so the program's bare imports
(`@anthropic-ai/claude-agent-sdk`, `hemra-harness`) resolve as Node walks up from
its own folder, and nothing of the task's image is needed.

The program reports its messages, tool calls, usage and cost as events through
the harness client: HEMRA's harness protocol is relayed into the sandbox like a
model endpoint (its answers never read for usage), so it works without a network.
The model endpoints the harness's `*_BASE_URL` variables name (else the SDK's
public API) are relayed too. Standard output and error are kept as output events
and as the artifacts /logs/agent/sdk-stdout.txt and sdk-stderr.txt, stored by
HEMRA directly, never written into the sandbox.
"""

import asyncio
import hashlib
import ipaddress
import json
import shlex
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import filelock

from hemra.services import envtemplate
from hemra.services.common import mcp
from hemra.services.common.mcp import TOOLS_MOUNT
from hemra.services.executor import artifacts
from hemra.services.executor.artifacts import OwnLog
from hemra.services.executor.events import event, output_events, text
from hemra.services.executor.harnesses import mcp as mcp_servers
from hemra.services.executor.harnesses.base import (
    COMPLETED,
    HARNESS_FAILED,
    HARNESS_MOUNT,
    TIMED_OUT,
    HarnessDriver,
    HarnessResult,
    TrialContext,
)
from hemra.services.executor.harnesses.cli import install
from hemra.services.executor.harnesses.cli.base import AGENT_HOME, AGENT_TMP, DEFAULT_PATH, MAX_RETRIES, MAX_VERSION
from hemra.services.executor.sandboxes import SandboxError
from hemra.services.executor.sandboxes.relay import Unwatched, endpoints_of

#: sdk = "..." in a harness file: the npm package, where its model calls go by default, the
#: variable that moves them, and the switches that keep it to its model calls.
SDKS = {
    "claude-agent-sdk": {
        "package": "@anthropic-ai/claude-agent-sdk",
        "base_url": ("ANTHROPIC_BASE_URL", "https://api.anthropic.com"),
        "env": {
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            "IS_SANDBOX": "1",  # bypassPermissions as root: the sandbox is what contains it
            "CLAUDE_CODE_MAX_RETRIES": str(MAX_RETRIES),
        },
    },
    "openai-agents": {
        "package": "@openai/agents",
        "base_url": ("OPENAI_BASE_URL", "https://api.openai.com/v1"),
        # Traces would go to OpenAI's own endpoint, never relayed: HEMRA keeps the events.
        "env": {"OPENAI_AGENTS_DISABLE_TRACING": "1"},
    },
}
#: Where the SDK's node_modules is mounted: the parent of HARNESS_MOUNT, on Node's module path.
MODULES_MOUNT = "/opt/hemra/node_modules"
#: HEMRA's TypeScript harness client, packed into each SDK's tools folder.
CLIENT = Path(__file__).resolve().parents[3] / "clients" / "harness-ts"
STDOUT_LOG, STDERR_LOG = "/logs/agent/sdk-stdout.txt", "/logs/agent/sdk-stderr.txt"
_TAIL_BYTES = 4096


def settings(harness) -> dict:
    return SDKS[harness.agent]


def tool_name(harness) -> str:
    return f"sdk-{harness.agent}"


class SdkDriver(HarnessDriver):
    async def mounts(self, harness) -> dict[str, str]:
        folder = Path(harness.source_path).parent
        if not folder.is_dir():
            raise SandboxError(f"harness {harness.harness_name}: its folder {folder} is gone")
        tools = await ensure(harness.agent, settings(harness)["package"], harness.agent_version)
        return {
            f"{TOOLS_MOUNT}/{tool_name(harness)}": str(tools),
            MODULES_MOUNT: str(tools / "node_modules"),
            **await mcp_servers.mounts(harness),
            HARNESS_MOUNT: str(folder),
        }

    def endpoints(self, harness) -> list[tuple[str, int]]:
        name, default = settings(harness)["base_url"]
        passed = envtemplate.pass_through(harness.env)
        urls = {n: url for n, url in sorted(passed.items()) if n.endswith("_BASE_URL")}
        if name not in urls:
            urls[f"{harness.agent}'s default API"] = default
        return endpoints_of(urls)

    def protocol_endpoints(self, address: str) -> list[tuple[str, int]]:
        return [Unwatched(_inside(address))]

    async def run(self, trial: TrialContext) -> HarnessResult:
        harness = trial.harness
        root = f"{TOOLS_MOUNT}/{tool_name(harness)}"
        tools = Path((await self.mounts(harness))[root])
        version = _installed_version(tools, settings(harness)["package"])[:MAX_VERSION]
        passed = envtemplate.pass_through(harness.env)
        env = self._environment(trial, passed, root)
        declared = mcp_servers.servers(harness)
        await trial.events.emit(
            event(
                "status",
                "agent",
                sdk=harness.agent,
                package=settings(harness)["package"],
                pinned=harness.agent_version,
                version=version,
                model=trial.model,
                command=list(harness.command),
                env_names=sorted(passed),
            )
        )
        # Its MCP servers are the program's to hand to the SDK; HEMRA checks they start, first.
        await mcp_servers.check_started(trial, declared, env)
        argv = [f"{root}/node/bin/node", *harness.command[1:]]
        return await self._run_program(trial, argv, env, version)

    def _environment(self, trial: TrialContext, passed: dict[str, str], root: str) -> dict[str, str]:
        declared = mcp_servers.servers(trial.harness)
        path = dict(trial.task.environment.env).get("PATH", DEFAULT_PATH)
        host, port = _inside(trial.harness_address)
        return {
            "HOME": AGENT_HOME,
            "TMPDIR": AGENT_TMP,
            "PATH": f"{root}/node/bin:{path}",
            **settings(trial.harness)["env"],
            **passed,
            "HEMRA_HARNESS_ADDRESS": f"{host}:{port}",
            "HEMRA_HARNESS_TOKEN": trial.harness_token,
            "HEMRA_ATTEMPT_ID": trial.attempt_id,
            "HEMRA_TASK_NAME": trial.task.task_name,
            "HEMRA_MODEL": trial.model,
            "HEMRA_TIMEOUT_SECS": f"{trial.timeout:g}",
            "HEMRA_WORKDIR": trial.task.environment.workdir,
            **({mcp.PROGRAM_VARIABLE: json.dumps(mcp.program_declaration(declared))} if declared else {}),
        }

    async def _run_program(self, trial: TrialContext, argv, env, version: str) -> HarnessResult:
        stdout, stderr = OwnLog(STDOUT_LOG), OwnLog(STDERR_LOG)
        tail = bytearray()

        async def on_output(name: str, chunk: bytes) -> None:
            nonlocal tail
            (stdout if name == "stdout" else stderr).write(chunk)
            if name == "stderr":
                tail = (tail + chunk)[-_TAIL_BYTES:]
            await trial.events.emit(*output_events(name, chunk))

        await trial.events.emit_own(event("status", "start", command=argv))
        started = time.monotonic()
        try:
            result = await trial.sandbox.exec(
                f"mkdir -p {AGENT_HOME} {AGENT_TMP} && exec {shlex.join(argv)} </dev/null",
                cwd=HARNESS_MOUNT,
                env=env,
                timeout=trial.timeout,
                on_output=on_output,
            )
            await artifacts.keep(trial.events, stdout)
            await artifacts.keep(trial.events, stderr)
        finally:
            stdout.close()
            stderr.close()
        await trial.events.emit_own(
            event(
                "status",
                "exit",
                time.monotonic() - started,
                exit_code=result.exit_code,
                timed_out=result.timed_out,
                version=version,
            )
        )
        if result.timed_out:
            return HarnessResult(TIMED_OUT, -1, f"the sdk harness timed out after {trial.timeout:g} s", version)
        if result.exit_code != 0:
            said = _last_line(text(bytes(tail)))
            return HarnessResult(HARNESS_FAILED, result.exit_code, f"node exited {result.exit_code}: {said}", version)
        return HarnessResult(COMPLETED, 0, "", version)


def _inside(address: str) -> tuple[str, int]:
    """Where the program reaches the harness protocol from inside the sandbox. The sandbox runs
    on the executor's own machine: a loopback address or a host name is relayed as it is; any
    other address (a wildcard listener advertises this machine's) as 127.0.0.1, which a
    wildcard listener also serves and the relay may carry."""
    host, _, port = address.rpartition(":")
    host = host.strip("[]")
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return host or "127.0.0.1", int(port)
    return (host if ip.is_loopback else "127.0.0.1"), int(port)


async def ensure(sdk: str, package: str, version: str) -> Path:
    """The tools folder holding `package` at `version`, the harness client and a node."""
    return await asyncio.to_thread(_ensure, sdk, package, version)


def _ensure(sdk: str, package: str, version: str) -> Path:
    client = _client_digest()
    root = install.tools_dir()
    root.mkdir(parents=True, exist_ok=True)
    # The client's digest is in the name: a changed client is a new folder, never a stale one.
    final = root / f"sdk-{sdk}@{version}+hemra-harness-{client[:12]}"
    if final.is_dir():
        return final
    with filelock.FileLock(str(root / f".{final.name}.lock")):
        if final.is_dir():
            return final
        staging = Path(tempfile.mkdtemp(prefix=f".{final.name}.", dir=root))
        try:
            packed = _pack_client(staging)
            installed = install._npm_install(staging, package, version, (str(packed),))
            if installed != version:
                raise install.InstallError(f"npm installed {package} {installed}, not the pinned {version}")
            packed.unlink()
            install._copy_node(staging / "node" / "bin")
            (staging / "hemra-tool.json").write_text(
                json.dumps({"sdk": sdk, "package": package, "version": installed, "client": client}) + "\n"
            )
            staging.rename(final)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return final


def _client_files() -> list[Path]:
    built = CLIENT / "dist" / "src"
    if not (built / "index.js").is_file():
        raise install.InstallError(
            f"an sdk harness needs HEMRA's TypeScript harness client built: {CLIENT} has no dist/src "
            "(cd clients/harness-ts && npm ci && npm run build)"
        )
    files = [CLIENT / "package.json", *sorted(built.rglob("*")), *sorted((CLIENT / "proto").rglob("*"))]
    return [f for f in files if f.is_file()]


def _client_digest() -> str:
    digest = hashlib.sha256()
    for path in _client_files():
        digest.update(str(path.relative_to(CLIENT)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def _pack_client(into: Path) -> Path:
    """The client as an npm tarball in `into` (installed as a copy, where a folder would be a link)."""
    _client_files()
    npm = shutil.which("npm")
    if npm is None:
        raise install.InstallError("installing an sdk harness needs npm (Node.js) on the executor's host")
    done = subprocess.run(
        [npm, "pack", "--ignore-scripts", "--pack-destination", str(into), "--loglevel=error", str(CLIENT)],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        cwd=into,
    )
    packed = sorted(into.glob("*.tgz"))
    if done.returncode != 0 or len(packed) != 1:
        raise install.InstallError(f"npm pack {CLIENT} failed: {done.stderr.strip()[-300:]}")
    return packed[0]


def _installed_version(folder: Path, package: str) -> str:
    try:
        return str(json.loads((folder / "node_modules" / package / "package.json").read_text())["version"])
    except (OSError, ValueError, KeyError):
        return ""


def _last_line(said: str, limit: int = 300) -> str:
    lines = [line for line in said.strip().splitlines() if line.strip()]
    return lines[-1][:limit] if lines else ""
