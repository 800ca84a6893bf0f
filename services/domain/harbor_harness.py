"""The keys of a kind = "harbor" harness file, checked at resolve.

    kind = "harbor"
    agent = "oracle"            # any agent name Harbor's `harbor run -a` takes
    version = "0.25.0"          # Harbor's own PyPI version, exact
    model = "anthropic/claude-sonnet-4-5"   # optional: Harbor's -m
    env = ["ANTHROPIC_API_KEY"] # optional: variable names handed to Harbor
    [options]                   # optional: Harbor's agent kwargs (--ak key=value)
    max_turns = 30

The executor reads the same keys back from the harness's text (services/executor/harbor).
"""

import re
from pathlib import Path

from hemra.services.common import harbor_options
from hemra.services.domain.planerrors import PlanError

#: An exact PyPI release (0.25.0, 1.2.3rc1, 1.2.3.post1): no ranges, so a pin means one build.
VERSION = re.compile(r"^\d+\.\d+\.\d+((a|b|rc|\.post|\.dev)\d+)?$")
#: What Harbor takes after -a: its built-in agent names are lower-case words and dashes.
AGENT = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
#: Keys of other kinds, refused by name rather than ignored.
_NOT_FOR_HARBOR = {
    "command": "Harbor runs its own agent; command is for program and sdk harnesses",
    "mcp_server": "Harbor's agents take no MCP servers from HEMRA",
    "permission": "permission is for acp harnesses",
    "sdk": "sdk is for sdk harnesses",
}


def check(data: dict, path: Path) -> None:
    for key, why in _NOT_FOR_HARBOR.items():
        if key in data:
            raise PlanError(f"{path}: {key} is not a key of a harbor harness ({why})")
    agent = data.get("agent")
    if not isinstance(agent, str) or not AGENT.match(agent):
        raise PlanError(f'{path}: a harbor harness needs agent, a Harbor agent name like "oracle" (got {agent!r})')
    version = data.get("version")
    if not isinstance(version, str) or not VERSION.match(version):
        raise PlanError(
            f'{path}: a harbor harness needs version, the exact PyPI version of harbor like "0.25.0" (got {version!r})'
        )
    model = data.get("model", "")
    if not isinstance(model, str) or model.startswith("-"):
        raise PlanError(f"{path}: model must be a string (Harbor's provider/model)")
    options(data, path)


def options(data: dict, path: Path | str) -> list[str]:
    """The [options] table as `key=value` agent kwargs, in file order."""
    try:
        return harbor_options.agent_kwargs(data)
    except harbor_options.BadOption as exc:
        raise PlanError(f"{path}: {exc}") from None
