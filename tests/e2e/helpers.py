"""Helpers for end-to-end tests that drive the real `hemra` command."""

import json
import shutil
import subprocess
from pathlib import Path

from tests.conftest import HEMRA, REPO

BUNDLED = REPO / "examples" / "hemra-offline"


def hemra(env: dict, *args: str, cwd: Path | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([HEMRA, *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)


def runs(env: dict) -> list[dict]:
    result = hemra(env, "runs", "--json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def show(env: dict, ref: str, *flags: str) -> dict:
    result = hemra(env, "show", ref, *flags)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def peak_concurrency(spans_log: Path) -> int:
    """The most attempts running at once, from 'start <time>' / 'end <time>' lines."""
    marks = sorted(
        (float(stamp), kind) for kind, stamp in (line.split() for line in spans_log.read_text().splitlines())
    )
    live = peak = 0
    for _, kind in marks:
        live += 1 if kind == "start" else -1
        peak = max(peak, live)
    return peak


def copy_task(name: str, into: Path, new_name: str | None = None) -> Path:
    target = into / (new_name or name)
    shutil.copytree(BUNDLED / name, target)
    if new_name:
        toml = target / "task.toml"
        toml.write_text(toml.read_text().replace(f'"hemra/{name}"', f'"hemra/{new_name}"'))
    return target
