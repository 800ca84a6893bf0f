"""An attempt's usage (tokens and cost) as its `usage` events say, summed when the events are
written: a run's usage is then read from its attempts' rows, never from a million-event trace.

Every writer of events adds its batch's totals in the statement that numbers the batch (a
repeated batch adds nothing), a restore sums what it restores, and migration 0011 summed the
events stores held before. Changing what counts means a migration that sums them again."""

from dataclasses import dataclass

import msgspec

#: Usage event keys, by what they count (the first present wins).
KEYS = {
    "input_tokens": ("input_tokens", "prompt_tokens"),
    "output_tokens": ("output_tokens", "completion_tokens"),
    "cost_usd": ("cost_usd", "cost", "total_cost"),
}
#: The attempt columns that hold the sums, with the event count.
COLUMNS = (*KEYS, "usage_events")
#: The most one event may count: a harness's absurd or hostile figure counts nothing rather than
#: overflow its attempt's 64-bit sums (and so fail the append that carries it).
LIMITS = {"input_tokens": 2**40, "output_tokens": 2**40, "cost_usd": 1e9}


@dataclass
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    usage_events: int = 0

    def __bool__(self) -> bool:
        return self.usage_events > 0

    def add(self, other: "Usage") -> None:
        for name in COLUMNS:
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def values(self) -> dict:
        return {name: getattr(self, name) for name in COLUMNS}


def _number(payload: dict, name: str) -> float:
    """The first of the keys for `name` the payload holds, when it is a number from 0 to the
    limit (a string, true, a negative or a huge figure counts 0)."""
    for key in KEYS[name]:
        value = payload.get(key)
        if value is None:
            continue
        if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value <= LIMITS[name]:
            return value
        return 0
    return 0


def of_events(events) -> Usage:
    """The usage of a batch of event rows (dicts with `type` and `payload`, JSON text)."""
    total = Usage()
    for event in events:
        if event.get("type") != "usage":
            continue
        total.usage_events += 1
        try:
            payload = msgspec.json.decode(event.get("payload") or "{}")
        except msgspec.DecodeError:
            continue
        if not isinstance(payload, dict):
            continue
        total.input_tokens += int(_number(payload, "input_tokens"))
        total.output_tokens += int(_number(payload, "output_tokens"))
        total.cost_usd += float(_number(payload, "cost_usd"))
    return total


def added(table, usage: Usage) -> dict:
    """UPDATE values that add `usage` to an attempt row's sums (none when the batch has no usage)."""
    if not usage:
        return {}
    return {name: table.c[name] + value for name, value in usage.values().items()}
