"""An attempt's usage (tokens and cost) as its `usage` events say, summed when the events are
written: a run's usage is then read from its attempts' rows, never from a million-event trace.

Apart from it, the usage HEMRA's model relay read itself (`usage_observed` events, HEMRA's own:
services/executor/sandboxes/relayusage.py) is summed into the attempt's usage_observed_*
columns, never into what the harness reported.

Every writer of events adds its batch's totals in the statement that numbers the batch (a
repeated batch adds nothing), a restore sums what it restores, and migration 0011 summed the
events stores held before. Changing what counts means a migration that sums them again.

The same pass counts the batch's events that mine the repository's history (tool calls whose
commands reach beyond HEAD: services/common/mining.py) into the attempt's mining_events, so a
report counts such attempts from their rows; migration 0017 counted the events stores held
before."""

from dataclasses import dataclass, field

import msgspec

from hemra.services.common import mining
from hemra.services.domain.vocabulary import USAGE_OBSERVED

#: Usage event keys, by what they count (the first present wins).
KEYS = {
    "input_tokens": ("input_tokens", "prompt_tokens"),
    "output_tokens": ("output_tokens", "completion_tokens"),
    "cost_usd": ("cost_usd", "cost", "total_cost"),
}
#: The attempt columns that hold the sums, with the event count.
COLUMNS = (*KEYS, "usage_events")
#: What a `usage_observed` event counts (relayusage.Observed), each summed into the attempt's
#: column usage_observed_<key>; usage_observed_events counts the events.
OBSERVED_KEYS = (
    "input_tokens",
    "output_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
    "model_calls",
    "unreadable",
)
OBSERVED_COLUMNS = (*(f"usage_observed_{key}" for key in OBSERVED_KEYS), "usage_observed_events")
#: Events with a history-mining hit (services/common/mining.py): not usage, summed with it.
MINING_COLUMNS = ("mining_events",)
#: Every column an event batch adds to.
SUMMED = (*COLUMNS, *OBSERVED_COLUMNS, *MINING_COLUMNS)
#: The most one event may count: a harness's absurd or hostile figure counts nothing rather than
#: overflow its attempt's 64-bit sums (and so fail the append that carries it).
LIMITS = {"input_tokens": 2**40, "output_tokens": 2**40, "cost_usd": 1e9}


@dataclass
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    usage_events: int = 0
    #: usage_observed_* sums, by column.
    observed: dict = field(default_factory=lambda: dict.fromkeys(OBSERVED_COLUMNS, 0))
    #: Events with a history-mining hit.
    mining_events: int = 0

    def __bool__(self) -> bool:
        return self.usage_events > 0 or self.observed["usage_observed_events"] > 0 or self.mining_events > 0

    def add(self, other: "Usage") -> None:
        for name in COLUMNS:
            setattr(self, name, getattr(self, name) + getattr(other, name))
        for name in OBSERVED_COLUMNS:
            self.observed[name] += other.observed[name]
        self.mining_events += other.mining_events

    def values(self) -> dict:
        """The reported sums (COLUMNS)."""
        return {name: getattr(self, name) for name in COLUMNS}

    def summed(self) -> dict:
        """Every sum an event batch adds (SUMMED)."""
        return {**self.values(), **self.observed, "mining_events": self.mining_events}


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
        if event.get("type") == "tool_call":
            total.mining_events += mines(event)
            continue
        if event.get("type") == USAGE_OBSERVED:
            _observe(total, event)
            continue
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


def mines(event: dict) -> bool:
    """Whether a tool_call event row (payload as JSON text) mines the repository's history."""
    payload = event.get("payload") or "{}"
    if not mining.worth_reading(payload):
        return False
    try:
        decoded = msgspec.json.decode(payload)
    except msgspec.DecodeError:
        return False
    return bool(mining.event_hits(event.get("type", ""), event.get("name", ""), decoded))


def _observe(total: Usage, event: dict) -> None:
    total.observed["usage_observed_events"] += 1
    try:
        payload = msgspec.json.decode(event.get("payload") or "{}")
    except msgspec.DecodeError:
        return
    if not isinstance(payload, dict):
        return
    for key in OBSERVED_KEYS:
        value = payload.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= LIMITS["input_tokens"]:
            total.observed[f"usage_observed_{key}"] += value


def added(table, usage: Usage) -> dict:
    """UPDATE values that add `usage` to an attempt row's sums (none when the batch has no usage)."""
    if not usage:
        return {}
    return {name: table.c[name] + value for name, value in usage.summed().items()}


def differs(reported: dict, observed: dict) -> bool:
    """Whether what the harness reported and what the relay read disagree on input or output
    tokens (only when the relay read something: an attempt without it has nothing to compare)."""
    if not observed.get("usage_observed_events"):
        return False
    return any(
        reported.get(key, 0) != observed.get(f"usage_observed_{key}", 0) for key in ("input_tokens", "output_tokens")
    )
