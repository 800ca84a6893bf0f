"""HEMRA_OFFLINE=1: HEMRA fetches nothing. Each place that would fetch (a registry dataset, a
Hugging Face snapshot, an agent CLI from npm, a Docker base image) asks `refused` first and,
offline, fails in one line naming what it would have fetched, before anything is recorded
wherever the planner can tell (docs/trust-and-privacy.md lists every such place).

Read from the environment of the process that would fetch: `hemra run --offline` sets it for
the services it starts itself; a `hemra serve` or worker needs it in its own environment.
"""

import os

VAR = "HEMRA_OFFLINE"


def enabled() -> bool:
    return os.environ.get(VAR, "").strip().lower() not in ("", "0", "false", "no")


def refused(what: str) -> str | None:
    """The one-line reason fetching `what` is refused, or None when fetching is allowed."""
    if not enabled():
        return None
    return f"offline ({VAR}=1): HEMRA would fetch {what}"
