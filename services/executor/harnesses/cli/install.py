"""Agent CLIs installed from npm once per version, into a cached tool folder on the executor's host.

    <tools>/<agent>@<version>/node_modules/...

<tools> is $HEMRA_TOOLS_DIR, else the user's cache folder (~/.cache/hemra/tools
on Linux). A version is installed into a temporary folder beside its final
place and renamed into it when npm is done, under a file lock, so concurrent
attempts (and executors sharing the folder) install it once and never see a
half-installed tool. The folder is then mounted read-only into sandboxes.
"""

import asyncio
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import filelock

from hemra.services.common import offline
from hemra.services.common.tools import tools_dir
from hemra.services.executor.sandboxes import SandboxError

NPM_TIMEOUT_SECS = 900
#: A pin that cannot change under a cached folder: unpinned agents resolve per executor process.
_unpinned: dict[str, Path] = {}


class InstallError(SandboxError):
    """npm could not install the agent (an infrastructure failure: registry, disk, or a bad pin)."""


async def ensure(agent: str, package: str, version: str, with_node: bool = False) -> Path:
    """The host folder holding `package` at `version` (installing it if needed).

    An empty `version` installs the newest release npm picks for this Node once
    per process, kept under the version it turned out to be. `with_node` also
    copies the host's node into <folder>/node/bin, for agents written in
    JavaScript that must run in sandboxes without a Node.js of their own."""
    return await asyncio.to_thread(_ensure, agent, package, version, with_node)


def _ensure(agent: str, package: str, version: str, with_node: bool = False) -> Path:
    if not version and agent in _unpinned:
        return _unpinned[agent]
    root = tools_dir()
    root.mkdir(parents=True, exist_ok=True)
    final = root / f"{agent}@{version}"
    if version and final.is_dir():
        return final
    with filelock.FileLock(str(root / f".{agent}@{version or 'latest'}.lock")):
        if version and final.is_dir():  # another attempt installed it while we waited
            return final
        staging = Path(tempfile.mkdtemp(prefix=f".{agent}@{version or 'latest'}.", dir=root))
        try:
            installed = _npm_install(staging, package, version)
            if with_node:
                _copy_node(staging / "node" / "bin")
            final = root / f"{agent}@{installed}"
            (staging / "hemra-tool.json").write_text(
                json.dumps({"agent": agent, "package": package, "version": installed}) + "\n"
            )
            if not final.is_dir():
                staging.rename(final)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    if not version:
        _unpinned[agent] = final
    return final


def _copy_node(into: Path) -> None:
    node = shutil.which("node")
    if node is None:
        raise InstallError("the executor's host has no node to run the agent with")
    into.mkdir(parents=True)
    shutil.copy2(os.path.realpath(node), into / "node")


def _npm_install(prefix: Path, package: str, version: str, extra: tuple[str, ...] = ()) -> str:
    """Install into `prefix` (with `extra` specs beside it); the version of `package` npm installed."""
    spec = f"{package}@{version}" if version else package
    if why := offline.refused(f"{spec} from npm (not in the tool cache {prefix.parent})"):
        raise InstallError(why)
    npm = shutil.which("npm")
    if npm is None:
        raise InstallError(f"installing {package} needs npm (Node.js) on the executor's host")
    command = [
        npm,
        "install",
        "--prefix",
        str(prefix),
        "--no-audit",
        "--no-fund",
        "--no-update-notifier",
        "--loglevel=error",
        spec,
        *extra,
    ]
    try:
        # From the folder it installs into: nothing of the working folder (an .npmrc, a
        # package.json of whoever's repository the command was started in) is npm's.
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=NPM_TIMEOUT_SECS, stdin=subprocess.DEVNULL, cwd=prefix
        )
    except subprocess.TimeoutExpired:
        raise InstallError(f"npm install {spec} took longer than {NPM_TIMEOUT_SECS} s") from None
    if done.returncode != 0:
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        raise InstallError(f"npm install {spec} failed: {' | '.join(lines[-3:])[:500]}")
    manifest = prefix / "node_modules" / package / "package.json"
    try:
        return json.loads(manifest.read_text())["version"]
    except (OSError, ValueError, KeyError):
        raise InstallError(f"npm install {spec} left no {package}/package.json") from None
