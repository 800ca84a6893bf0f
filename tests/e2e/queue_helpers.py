"""Starting and stopping `hemra serve` and `hemra worker` processes in tests (bounded, by PID)."""

import json
import os
import signal
import socket
import subprocess
import time
from pathlib import Path

from tests.conftest import HEMRA
from tests.e2e.helpers import hemra, show


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start(env: dict, *args: str, log: Path) -> subprocess.Popen:
    if args[0] == "serve" and "--listen" not in args:
        args = (*args, "--listen", "127.0.0.1:0")  # tests never take the default port 7878
    return subprocess.Popen(
        [HEMRA, *args], env=env, stdout=log.open("ab"), stderr=subprocess.STDOUT, start_new_session=True
    )


def stop(process: subprocess.Popen, sig: int = signal.SIGTERM, timeout: float = 30) -> int:
    if process.poll() is None:
        os.kill(process.pid, sig)
    return process.wait(timeout=timeout)


def wait_for(predicate, timeout: float, step: float = 0.25):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(step)
    raise AssertionError(f"not true within {timeout} s")


def progress(env: dict, run: str) -> dict:
    result = hemra(env, "runs", "--json")
    for item in json.loads(result.stdout):
        if item["id"] == run or item["label"] == run:
            return item.get("progress", {})
    return {}


def finished(env: dict, run: str) -> bool:
    p = progress(env, run)
    return bool(p) and p.get("done", 0) == p.get("trials", -1)


def trials_of(env: dict, run: str) -> dict[str, list[dict]]:
    """Attempts grouped by trial, in attempt order."""
    grouped: dict[str, list[dict]] = {}
    for attempt in sorted(show(env, run)["attempts"], key=lambda a: (a["trial_id"], a["number"])):
        grouped.setdefault(attempt["trial_id"], []).append(attempt)
    return grouped


def assert_each_trial_once(env: dict, run: str, expected_trials: int) -> dict[str, list[dict]]:
    """Every trial ends exactly once: earlier attempts are infrastructure failures, the last is a
    graded result, and oracle scored 1 where nop scored 0."""
    grouped = trials_of(env, run)
    assert len(grouped) == expected_trials
    for attempts in grouped.values():
        *earlier, last = attempts
        assert [a["number"] for a in attempts] == list(range(1, len(attempts) + 1))
        assert all(a["outcome"] == "OUTCOME_INFRA_FAILED" for a in earlier), earlier
        assert last["outcome"] == "OUTCOME_COMPLETED", last
        expected = 1.0 if last["harness_name"] == "oracle" else 0.0
        assert set(last["score"]["rewards"].values()) == {expected}, last
    return grouped
