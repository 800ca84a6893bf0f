"""The keys of a kind = "computer-use" harness file, checked at resolve (the [computer]
table: services/common/computer_use.py; the driver: services/executor/harnesses/computer_use.py)."""

from pathlib import Path

from hemra.services.common import computer_use
from hemra.services.domain.planerrors import PlanError

#: Keys of other kinds, refused by name rather than ignored.
_NOT_FOR_COMPUTER_USE = {
    "agent": "a computer-use harness is HEMRA's own driver; computer.api names the model's API",
    "version": "a computer-use harness installs nothing",
    "command": "a computer-use harness runs no program of its own; computer.start opens programs on the desktop",
    "sdk": "sdk is for sdk harnesses",
    "permission": "permission is for acp harnesses",
    "mcp_server": "a computer-use model acts through the screen only",
}


def check(data: dict, path: Path) -> None:
    for key, why in _NOT_FOR_COMPUTER_USE.items():
        if key in data:
            raise PlanError(f"{path}: {key} is not a key of a computer-use harness ({why})")
    if not isinstance(data.get("model", ""), str):
        raise PlanError(f"{path}: model must be a string")
    try:
        computer_use.settings(data)
    except ValueError as exc:
        raise PlanError(f"{path}: {exc}") from None
