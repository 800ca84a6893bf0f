"""Harness files (TOML in harnesses/ next to a run file) and the built-in harnesses."""

import hashlib
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from hemra.services.common import mcp, parsing
from hemra.services.domain import acp_harness, computer_use_harness, harbor_harness, sdk_harness
from hemra.services.domain.planerrors import NotFound, PlanError
from hemra.v1 import common_pb2 as pb

#: oracle runs the task's solution/solve.sh (must score 1); nop does nothing (must score 0).
BUILTINS = ("oracle", "nop")
KINDS = ("program", "cli", "sdk", "acp", "computer-use", "harbor")
#: kind = "cli": the agent CLIs the executor installs from npm and drives.
CLI_AGENTS = ("claude-code", "codex", "pi")
KEYS = {
    "name",
    "description",
    "kind",
    "agent",
    "version",
    "model",
    "env",
    "command",
    "mcp_server",
    "permission",
    "sdk",
    "options",
    "computer",
}
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
#: An exact npm version (or "" for unpinned); no ranges or tags, so a pin means one build.
_VERSION = re.compile(r"^(|\d+\.\d+\.\d+([-+][0-9A-Za-z.-]+)?)$")


@dataclass
class LoadedHarness:
    harness_name: str
    kind: str
    digest: str
    source_text: str = ""
    agent: str = ""
    agent_version: str = ""
    model: str = ""
    env: list[str] = field(default_factory=list)
    command: list[str] = field(default_factory=list)
    source_path: str = ""


def builtin(name: str) -> LoadedHarness:
    digest = "sha256:" + hashlib.sha256(f"hemra builtin harness {name} v1".encode()).hexdigest()
    return LoadedHarness(harness_name=name, kind="builtin", digest=digest, agent=name, agent_version="1")


def resolve(ref: str, base: Path) -> LoadedHarness:
    """A built-in name, a harness name in base/harnesses/, or a path to a harness file."""
    candidate = Path(ref).expanduser()
    if ref.endswith(".toml") or "/" in ref:
        path = candidate if candidate.is_absolute() else base / candidate
    else:
        path = base / "harnesses" / f"{ref}.toml"
        if not path.is_file() and ref in BUILTINS:
            return builtin(ref)
    if not path.is_file():
        known = ", ".join(BUILTINS)
        raise NotFound(f"harness {ref!r} not found: no {path} (built-ins: {known})")
    return load(path)


def load(path: Path) -> LoadedHarness:
    try:
        text, data = parsing.read_toml_text(path)
    except parsing.Unreadable as exc:
        raise PlanError(str(exc)) from None
    except OSError as exc:  # absent
        raise PlanError(f"{path}: cannot be read: {exc.strerror or exc}") from None
    if "mcp_servers" in data:  # accepted and ignored before servers were handed to agents
        raise PlanError(f"{path}: mcp_servers is not a key; declare each MCP server as a [[mcp_server]] table")
    unknown = sorted(set(data) - KEYS)
    if unknown:
        raise PlanError(f"{path}: unknown key {unknown[0]!r} (known: {', '.join(sorted(KEYS))})")
    kind = data.get("kind")
    if kind not in KINDS:
        raise PlanError(f"{path}: kind must be one of {', '.join(KINDS)} (got {kind!r})")
    if kind == "cli":
        _check_cli(data, path)
    if kind == "acp":
        acp_harness.check(data, path)
    if kind == "computer-use":
        computer_use_harness.check(data, path)
    elif "computer" in data:
        raise PlanError(f"{path}: computer is a key of computer-use harnesses only (this one is {kind!r})")
    if kind == "sdk":
        sdk_harness.check(data, path)
    elif "sdk" in data:
        raise PlanError(f"{path}: sdk is a key of sdk harnesses only (this one is {kind!r})")
    if kind == "harbor":
        harbor_harness.check(data, path)
    elif "options" in data:
        raise PlanError(f"{path}: options is a key of harbor harnesses only (this one is {kind!r})")
    servers = _mcp_servers(data, path, kind)
    identity = text + ("\0" + mcp.rendered(servers, kind, str(data.get("agent", ""))) if servers else "")
    if kind == "sdk":  # the program is the harness: a changed script is a new harness
        identity += "\0" + _script_text(path.parent / _command(data["command"], path, kind)[1])
    harness = LoadedHarness(
        harness_name=str(data.get("name") or path.stem),
        kind=kind,
        digest="sha256:" + hashlib.sha256(identity.encode()).hexdigest(),
        source_text=text,
        agent=str(data.get("sdk" if kind == "sdk" else "agent", "")),
        agent_version=str(data.get("version", "")),
        model=str(data.get("model", "")),
        # The servers' variables are passed to the agent like its own: it hands them on.
        env=list(dict.fromkeys(_env_names(data.get("env", []), path) + mcp.variables(servers))),
        command=_command(data.get("command"), path, kind),
        source_path=str(path.resolve()),
    )
    return harness


def _mcp_servers(data: dict, path: Path, kind: str) -> list[mcp.McpServer]:
    """The [[mcp_server]] tables, refused for an agent that cannot take them."""
    if "mcp_server" not in data:
        return []
    try:
        servers = mcp.parse(data["mcp_server"])
    except mcp.BadDeclaration as exc:
        raise PlanError(f"{path}: {exc}") from None
    if kind == "cli" and data.get("agent") == "pi":
        raise PlanError(
            f"{path}: pi takes no MCP servers (its CLI has none); "
            "[[mcp_server]] is for claude-code, codex, acp and program harnesses"
        )
    if kind == "cli" and data.get("agent") == "codex" and (why := mcp.codex_refusal(servers)):
        raise PlanError(f"{path}: {why}")
    return servers


def _check_cli(data: dict, path: Path) -> None:
    agent = data.get("agent")
    if agent not in CLI_AGENTS:
        raise PlanError(f"{path}: agent must be one of {', '.join(CLI_AGENTS)} for a cli harness (got {agent!r})")
    if "command" in data:
        raise PlanError(f"{path}: command is for program harnesses; a cli harness runs its agent's own CLI")
    for key in ("version", "model"):
        if not isinstance(data.get(key, ""), str):
            raise PlanError(f"{path}: {key} must be a string")
    if not _VERSION.match(data.get("version", "")):
        raise PlanError(f"{path}: version must be an npm version like 2.1.332 (got {data['version']!r})")


def _script_text(script: Path) -> str:
    try:
        return script.read_bytes().decode(errors="replace")
    except OSError as exc:
        raise PlanError(f"{script}: cannot be read: {exc.strerror or exc}") from None


def _env_names(value, path: Path) -> list[str]:
    if isinstance(value, dict):
        raise PlanError(f"{path}: env lists variable names only; values never go in harness files")
    if not isinstance(value, list) or not all(isinstance(v, str) and _ENV_NAME.match(v) for v in value):
        raise PlanError(f"{path}: env must be a list of environment variable names")
    return list(value)


def _command(value, path: Path, kind: str) -> list[str]:
    if value is None:
        if kind in ("program", "sdk"):
            raise PlanError(f"{path}: a program harness needs command")
        return []
    if isinstance(value, str):
        return shlex.split(value)
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        return list(value)
    raise PlanError(f"{path}: command must be a string or a list of strings")


def harness_to_proto(harness: LoadedHarness, run_model: str) -> pb.Harness:
    return pb.Harness(
        name=f"harnesses/{harness.digest}",
        digest=harness.digest,
        harness_name=harness.harness_name,
        kind=harness.kind,
        source_text=harness.source_text,
        agent=harness.agent,
        agent_version=harness.agent_version,
        model=harness.model or run_model,
        env=harness.env,
        command=harness.command,
        source_path=harness.source_path,
    )
