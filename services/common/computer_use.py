"""The [computer] table of a kind = "computer-use" harness file, read the same way by the
planner (which refuses a bad one at resolve) and the executor's driver
(services/executor/harnesses/computer_use.py).

    [computer]
    api = "anthropic"              # or "openai" (the Responses API's computer_use_preview)
    screen = [1280, 800]           # the sandbox's X screen, in pixels
    model_screen = [1024, 640]     # what the model sees and clicks in (default: screen)
    start = ["xterm"]              # shell commands opening programs on the desktop first
    max_turns = 50                 # model calls at most
"""

from dataclasses import dataclass

APIS = ("anthropic", "openai")
KEYS = {"api", "screen", "model_screen", "start", "max_turns"}
#: Sides from 200 to 4096 pixels: the model's images and the X server's memory stay bounded.
MIN_SIDE, MAX_SIDE = 200, 4096
MAX_TURNS = 500
#: The image the bundled desktop is in (scripts/setup-docker.sh), the default sandbox.image
#: of a run with a computer-use harness.
DESKTOP_IMAGE = "hemra-desktop:bookworm"


@dataclass(frozen=True)
class Computer:
    api: str = "anthropic"
    screen: tuple[int, int] = (1280, 800)
    model_screen: tuple[int, int] = (1280, 800)
    start: tuple[str, ...] = ()
    max_turns: int = 50


def settings(data: dict) -> Computer:
    """The harness file's [computer] table with its defaults; ValueError naming the bad key."""
    table = data.get("computer", {})
    if not isinstance(table, dict):
        raise ValueError("computer must be a table ([computer])")
    unknown = sorted(set(table) - KEYS)
    if unknown:
        raise ValueError(f"unknown key computer.{unknown[0]} (known: {', '.join(sorted(KEYS))})")
    api = table.get("api", "anthropic")
    if api not in APIS:
        raise ValueError(f"computer.api must be one of {', '.join(APIS)} (got {api!r})")
    screen = _size(table.get("screen", [1280, 800]), "screen")
    model_screen = _size(table.get("model_screen", list(screen)), "model_screen")
    start = table.get("start", [])
    if isinstance(start, str):
        start = [start]
    if not isinstance(start, list) or not all(isinstance(s, str) and s.strip() for s in start):
        raise ValueError("computer.start must be a list of shell commands")
    turns = table.get("max_turns", 50)
    if isinstance(turns, bool) or not isinstance(turns, int) or not 1 <= turns <= MAX_TURNS:
        raise ValueError(f"computer.max_turns must be a whole number from 1 to {MAX_TURNS}")
    return Computer(api, screen, model_screen, tuple(start), turns)


def _size(value, key: str) -> tuple[int, int]:
    if (
        not isinstance(value, list)
        or len(value) != 2
        or not all(isinstance(v, int) and not isinstance(v, bool) and MIN_SIDE <= v <= MAX_SIDE for v in value)
    ):
        raise ValueError(f"computer.{key} must be [width, height] in pixels, each {MIN_SIDE} to {MAX_SIDE}")
    return value[0], value[1]
