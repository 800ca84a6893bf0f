"""The keys of a kind = "acp" harness file, checked at resolve."""

import re
from pathlib import Path

from hemra.services.domain.planerrors import PlanError

#: How the agent's session/request_permission requests are answered.
POLICIES = ("allow", "deny")
#: An npm package name, scoped or not.
_PACKAGE = re.compile(r"^(@[a-z0-9][a-z0-9._~-]*/)?[a-z0-9][a-z0-9._~-]*$")
_VERSION = re.compile(r"^(|\d+\.\d+\.\d+([-+][0-9A-Za-z.-]+)?)$")


def check(data: dict, path: Path) -> None:
    """An acp harness runs an npm package (agent, pinned by version) or a command of its folder."""
    permission = data.get("permission", "allow")
    if permission not in POLICIES:
        raise PlanError(f"{path}: permission must be one of {', '.join(POLICIES)} (got {permission!r})")
    if data.get("command"):
        return
    agent, version = data.get("agent"), data.get("version", "")
    if not isinstance(agent, str) or not _PACKAGE.match(agent):
        raise PlanError(
            f"{path}: an acp harness needs agent, an npm package such as "
            f"@zed-industries/claude-agent-acp (got {agent!r}), or a command"
        )
    if not isinstance(version, str) or not _VERSION.match(version):
        raise PlanError(f"{path}: version must be an npm version like 0.23.1 (got {version!r})")
