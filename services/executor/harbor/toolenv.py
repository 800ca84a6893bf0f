"""Harbor installed from PyPI once per version, into a cached tool folder beside the agent CLIs.

    <tools>/harbor@<version>/bin/harbor      (a virtualenv on the Python Harbor needs)

Installed into a temporary folder beside its final place and renamed into it when pip is
done, under a file lock, as the agent CLIs are (harnesses/cli/install.py): concurrent
supervisors, and executors sharing the folder, install it once and never see half of it.
"""

import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import filelock

from hemra.services.common import offline
from hemra.services.common.tools import tools_dir
from hemra.services.executor.harnesses.cli.install import InstallError

PIP_TIMEOUT_SECS = 900
#: The Python Harbor's releases need (harbor 0.25 requires >= 3.12).
PYTHON = (3, 12)


def executable(folder: Path) -> Path:
    return folder / "bin" / "python"


def command(folder: Path) -> list[str]:
    """How to start Harbor's CLI from its folder: its venv's python, isolated (-I: nothing of
    the working folder or of PYTHON* variables is imported)."""
    return [str(executable(folder)), "-I", "-c", _MAIN]


_MAIN = "import sys; sys.argv[0] = 'harbor'; from harbor.cli.main import app; app()"


async def ensure(version: str) -> Path:
    """The folder of a virtualenv holding harbor==`version` (installing it if needed)."""
    return await asyncio.to_thread(_ensure, version)


def _ensure(version: str) -> Path:
    root = tools_dir()
    root.mkdir(parents=True, exist_ok=True)
    final = root / f"harbor@{version}"
    if (final / "hemra-tool.json").is_file():
        return final
    with filelock.FileLock(str(root / f".harbor@{version}.lock")):
        if (final / "hemra-tool.json").is_file():  # another supervisor installed it while we waited
            return final
        if why := offline.refused(f"harbor=={version} from PyPI (not in the tool cache {root})"):
            raise InstallError(why)
        staging = Path(tempfile.mkdtemp(prefix=f".harbor@{version}.", dir=root))
        try:
            python = find_python()
            _run([python, "-m", "venv", str(staging)], "python -m venv", cwd=staging)
            # The venv's scripts name the staging folder in their #! lines; its python does not,
            # so Harbor is always started through it (command()), wherever the folder now is.
            pip = [str(staging / "bin" / "python"), "-m", "pip"]
            _run([*pip, "install", "--quiet", "--disable-pip-version-check", f"harbor=={version}"], "pip", cwd=staging)
            (staging / "hemra-tool.json").write_text(json.dumps({"agent": "harbor", "version": version}) + "\n")
            if final.exists():
                shutil.rmtree(final)
            staging.rename(final)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return final


def find_python() -> str:
    """A working python3.12: the executor's own when it is one, else under pyenv's versions,
    else on PATH (a pyenv shim on PATH may refuse to run: each candidate is tried)."""
    if sys.version_info[:2] == PYTHON:
        return sys.executable
    name = "python{}.{}".format(*PYTHON)
    candidates = []
    for root in dict.fromkeys(filter(None, [os.environ.get("PYENV_ROOT", ""), os.path.expanduser("~/.pyenv")])):
        for folder in sorted(Path(root, "versions").glob("{}.{}.*".format(*PYTHON)), reverse=True):
            candidates.append(str(folder / "bin" / name))
    candidates += filter(None, [shutil.which(name)])
    for candidate in candidates:
        if _runs(candidate):
            return candidate
    raise InstallError(f"harbor needs {name} on the executor's host (under pyenv's versions or on PATH)")


def _runs(python: str) -> bool:
    try:
        done = subprocess.run([python, "-I", "-c", "import venv"], capture_output=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def _run(command: list[str], what: str, cwd: Path) -> None:
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=PIP_TIMEOUT_SECS, stdin=subprocess.DEVNULL, cwd=cwd
        )
    except subprocess.TimeoutExpired:
        raise InstallError(f"installing harbor: {what} took longer than {PIP_TIMEOUT_SECS} s") from None
    if done.returncode != 0:
        lines = [line for line in (done.stderr or done.stdout).splitlines() if line.strip()]
        raise InstallError(f"installing harbor: {what} failed: {' | '.join(lines[-3:])[:500]}")
