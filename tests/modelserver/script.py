"""A model script: the turns a scripted model plays, in order.

A script is a JSON list of turns (or an object {"turns": [...], "usage": {...}}):

    {"shell": "tac /app/data/steps.txt > /app/reversed.txt"}   a call to the client's own shell tool
    {"text": "Done."}                                           final text; the client ends its turn
    {"error": 500, "message": "scripted failure"}               an HTTP error in the provider's format
    {"tool": "lookup", "arguments": {"key": "a"}}               a call to the request's tool named lookup
                                                                (or an MCP tool ending in __lookup)

Turn k answers a request that already holds k tool results, so the server keeps
no state between requests. Past the last turn the model says SCRIPT_ENDED.

An object may also hold "judge": [...], the turns the model plays as a judge (requests that
offer no tools): tests/modelserver/judge.py.
"""

import json
from dataclasses import dataclass, field
from pathlib import Path

from tests.modelserver.judge import JudgeTurn, parse_turn

SCRIPT_ENDED = "The script has no more turns."
#: Tokens each answer reports (input, output), unless the script says otherwise.
DEFAULT_USAGE = {"input_tokens": 100, "output_tokens": 20}


@dataclass(frozen=True)
class Turn:
    shell: str | None = None
    #: Another tool the request offers, by its name (an MCP tool by its own name, unqualified).
    tool: str | None = None
    arguments: dict = field(default_factory=dict)
    text: str | None = None
    error: int | None = None
    message: str = "scripted failure"
    #: A judge's refusal (tests/modelserver/judge.py), in the provider's own form.
    refuse: bool = False


@dataclass
class Script:
    turns: list[Turn] = field(default_factory=list)
    usage: dict = field(default_factory=lambda: dict(DEFAULT_USAGE))
    judge: list[JudgeTurn] = field(default_factory=list)

    def turn(self, index: int) -> Turn:
        return self.turns[index] if index < len(self.turns) else Turn(text=SCRIPT_ENDED)


def parse(data) -> Script:
    """A Script from decoded JSON; ValueError naming the bad turn."""
    usage, judge = dict(DEFAULT_USAGE), []
    if isinstance(data, dict):
        usage.update(data.get("usage") or {})
        judge = [parse_turn(i, item) for i, item in enumerate(data.get("judge") or [])]
        data = data.get("turns", [])
    if not isinstance(data, list):
        raise ValueError("a script is a list of turns (or an object with a 'turns' list)")
    return Script([_turn(i, item) for i, item in enumerate(data)], usage, judge)


def load(path: Path) -> Script:
    try:
        return parse(json.loads(Path(path).read_text()))
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None


def _turn(index: int, item) -> Turn:
    if not isinstance(item, dict):
        raise ValueError(f"turn {index}: must be an object")
    keys = set(item) & {"shell", "tool", "text", "error"}
    if len(keys) != 1 or set(item) - {"shell", "tool", "arguments", "text", "error", "message"}:
        raise ValueError(f"turn {index}: needs exactly one of 'shell', 'tool', 'text', 'error' (got {sorted(item)})")
    if "error" in item and not (isinstance(item["error"], int) and 400 <= item["error"] <= 599):
        raise ValueError(f"turn {index}: error must be an HTTP status 400-599")
    return Turn(
        shell=item.get("shell"),
        tool=item.get("tool"),
        arguments=dict(item.get("arguments") or {}),
        text=item.get("text"),
        error=item.get("error"),
        message=str(item.get("message", "scripted failure")),
    )
