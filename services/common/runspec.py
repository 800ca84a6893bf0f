"""What a run spec means beyond its message, defined once: the value of each unset field and the
bounds of its numbers. hemra.v1.RunSpec is the contract; the run file and flags
(clients/cli/runfile.py), the planner and the store read these, never their own copies."""

import re
import time

from hemra.v1 import common_pb2 as pb

#: What an unset (empty or zero) field of a RunSpec means.
DEFAULTS = {
    "attempts": 1,
    "concurrency": 1,
    "timeout_secs": 0,
    "max_infra_retries": 0,
    "sandbox": "host",
    "pool": "default",
}
#: The longest a harness or a verifier may be given (a task's timeouts, a run's --timeout): 7 days.
MAX_TIMEOUT_SECS = 7 * 24 * 3600
#: The least and the largest value of each of a run's numbers (docs/runs.md); outside, a run is refused.
BOUNDS = {
    "attempts": (1, 1000),
    "concurrency": (1, 1000),
    "timeout_secs": (0, MAX_TIMEOUT_SECS),
    "max_infra_retries": (0, 100),
}


#: An executor pool's name is a DNS label: it names Kubernetes objects too (deploy/helm).
_POOL_NAME = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")


def pool_error(name: str) -> str:
    """Why `name` cannot name an executor pool, or ""."""
    if _POOL_NAME.fullmatch(name):
        return ""
    return f"pool {name!r} is not a pool name (lowercase letters, digits and '-', at most 63, no '-' at either end)"


def with_defaults(spec: pb.RunSpec) -> pb.RunSpec:
    """A copy of `spec` with each unset field that has a default set to it."""
    filled = pb.RunSpec()
    filled.CopyFrom(spec)
    for name, value in DEFAULTS.items():
        if not getattr(filled, name):
            setattr(filled, name, value)
    return filled


#: The longest part of a default label one harness or dataset name makes.
_LABEL_PART = 40


def default_label(harnesses: list[str], datasets: list[str], now: float | None = None) -> str:
    """The label of a run that names none: its harnesses, its datasets and the time (UTC, to the
    second), "oracle+nop_hemra-offline_1206-115431", so runs of the same setup stay apart by
    name (a label several runs carry names the newest, and commands say so)."""

    def part(names: list[str]) -> str:
        cut = [n.rstrip("/").rsplit("/", 1)[-1].removesuffix(".toml").split("@")[0][:_LABEL_PART] for n in names]
        shown = "+".join(dict.fromkeys(c for c in cut if c))
        return shown if len(shown) <= 2 * _LABEL_PART else shown[: 2 * _LABEL_PART] + "+..."

    stamp = time.strftime("%m%d-%H%M%S", time.gmtime(time.time() if now is None else now))
    return f"{part(harnesses)}_{part(datasets)}_{stamp}"


def out_of_bounds(name: str, value: int) -> str:
    """Why `value` cannot be the run's `name` ("at least 1", "at most 1,000"), or ""."""
    least, most = BOUNDS[name]
    if value < least:
        return f"at least {least}"
    return f"at most {most:,}" if value > most else ""
