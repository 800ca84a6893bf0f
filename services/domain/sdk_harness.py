"""The keys of a kind = "sdk" harness file, checked at resolve."""

import re
from pathlib import Path

from hemra.services.domain.planerrors import PlanError

#: sdk = "...": the agent SDKs the executor installs from npm (services/executor/harnesses/sdk.py).
SDKS = {"claude-agent-sdk": "@anthropic-ai/claude-agent-sdk", "openai-agents": "@openai/agents"}
#: An exact npm version: no ranges, tags or unpinned SDKs, so a pin means one build.
_VERSION = re.compile(r"^\d+\.\d+\.\d+([-+][0-9A-Za-z.-]+)?$")
#: Keys of other kinds, refused by name rather than ignored.
_NOT_FOR_SDK = {"agent": "an sdk harness names its SDK with sdk", "permission": "permission is for acp harnesses"}


def check(data: dict, path: Path) -> None:
    """An sdk harness runs `command` (node and a script of its folder) on a pinned SDK."""
    for key, why in _NOT_FOR_SDK.items():
        if key in data:
            raise PlanError(f"{path}: {key} is not a key of an sdk harness ({why})")
    sdk = data.get("sdk")
    if not isinstance(sdk, str) or sdk not in SDKS:  # a TOML list or table is no SDK (nor hashable)
        raise PlanError(f"{path}: sdk must be one of {', '.join(SDKS)} for an sdk harness (got {sdk!r})")
    version = data.get("version")
    if not isinstance(version, str) or not _VERSION.match(version):
        raise PlanError(f"{path}: an sdk harness needs version, the exact npm version of {SDKS[sdk]} (got {version!r})")
    if not isinstance(data.get("model", ""), str):
        raise PlanError(f"{path}: model must be a string")
    command = data.get("command")
    if isinstance(command, str):
        command = command.split()
    if not isinstance(command, list) or len(command) < 2 or command[0] != "node":
        raise PlanError(f'{path}: an sdk harness needs command = ["node", "<script of its folder>", ...]')
    script = command[1]
    if not isinstance(script, str) or script.startswith(("/", "-")) or ".." in Path(script).parts:
        raise PlanError(f"{path}: command's script must be a path inside the harness file's folder (got {script!r})")
    if not (path.parent / script).is_file():
        raise PlanError(f"{path}: command's script {script} is not a file beside the harness file")
