"""kind = "acp": the harness driver (its mounts, model endpoints and the agent's program)."""

import json
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from hemra.services import envtemplate
from hemra.services.common import mcp
from hemra.services.executor.harnesses import mcp as mcp_servers
from hemra.services.executor.harnesses.acp.session import Session
from hemra.services.executor.harnesses.base import (
    HARNESS_MOUNT,
    HarnessDriver,
    HarnessResult,
    TrialContext,
)
from hemra.services.executor.harnesses.cli import install
from hemra.services.executor.harnesses.cli.base import DEFAULT_PATH, TOOLS_MOUNT
from hemra.services.executor.sandboxes import SandboxError
from hemra.services.executor.sandboxes.relay import endpoints_of


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


class AcpDriver(HarnessDriver):
    async def mounts(self, harness) -> dict[str, str]:
        config = settings(harness)
        if config.command:
            folder = Path(harness.source_path).parent
            if not folder.is_dir():
                raise SandboxError(f"harness {harness.harness_name}: its folder {folder} is gone")
            return {HARNESS_MOUNT: str(folder), **await mcp_servers.mounts(harness)}
        # JavaScript agents bring the host's node along: task images rarely have one.
        folder = await install.ensure(tool_name(config.package), config.package, harness.agent_version, True)
        return {f"{TOOLS_MOUNT}/{tool_name(config.package)}": str(folder), **await mcp_servers.mounts(harness)}

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
            root = f"{TOOLS_MOUNT}/{tool_name(config.package)}"
            folder = Path((await self.mounts(trial.harness))[root])
            argv = [f"{root}/node_modules/.bin/{_bin_name(folder, config.package)}"]
            cwd, version, path = "", _installed_version(folder, config.package), f"{root}/node/bin:{path}"
        session = Session(trial, config)
        return await session.run(argv, cwd, version, path)


def tool_name(package: str) -> str:
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
