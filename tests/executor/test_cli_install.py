"""Agent tools installed from the real npm registry into a cached folder: once, atomically,
safely under concurrent attempts. A one-file package stands in for the (large) agents here;
the agents themselves are installed by tests/e2e/test_cli_agents.py."""

import asyncio
import json
import os
import shutil
from concurrent.futures import ThreadPoolExecutor

import pytest

from hemra.services.executor.harnesses.cli import install

pytestmark = pytest.mark.slow
PACKAGE, VERSION = "is-number", "7.0.0"


@pytest.fixture
def tools(tmp_path, monkeypatch):
    if shutil.which("npm") is None:
        if os.environ.get("HEMRA_REQUIRE_AGENT_CLIS"):
            pytest.fail("npm is required here to install agent CLIs")
        pytest.skip("npm is not installed")
    monkeypatch.setenv("HEMRA_TOOLS_DIR", str(tmp_path / "tools"))
    install._unpinned.clear()
    return tmp_path / "tools"


def test_concurrent_installs_share_one_folder(tools):
    with ThreadPoolExecutor(4) as pool:
        folders = list(pool.map(lambda _: install._ensure("tiny", PACKAGE, VERSION), range(4)))
    assert set(folders) == {tools / f"tiny@{VERSION}"}
    manifest = json.loads((folders[0] / "node_modules" / PACKAGE / "package.json").read_text())
    assert manifest["version"] == VERSION
    assert json.loads((folders[0] / "hemra-tool.json").read_text()) == {
        "agent": "tiny",
        "package": PACKAGE,
        "version": VERSION,
    }
    # Nothing half-installed is left beside it: only the folder and its lock.
    assert sorted(p.name for p in tools.iterdir()) == [f".tiny@{VERSION}.lock", f"tiny@{VERSION}"]


def test_an_installed_version_is_not_installed_again(tools, monkeypatch):
    folder = asyncio.run(install.ensure("tiny", PACKAGE, VERSION))
    marker = (folder / "hemra-tool.json").stat()
    monkeypatch.setenv("PATH", "/nonexistent")  # no npm now: the cache must answer
    assert asyncio.run(install.ensure("tiny", PACKAGE, VERSION)) == folder
    assert (folder / "hemra-tool.json").stat().st_ino == marker.st_ino


def test_a_version_npm_does_not_have_fails_cleanly(tools):
    with pytest.raises(install.InstallError, match=f"npm install {PACKAGE}@0.0.0-nope failed"):
        install._ensure("tiny", PACKAGE, "0.0.0-nope")
    assert [p.name for p in tools.iterdir()] == [".tiny@0.0.0-nope.lock"]


def test_unpinned_installs_the_newest_under_its_own_version(tools):
    folder = install._ensure("tiny", PACKAGE, "")
    version = json.loads((folder / "hemra-tool.json").read_text())["version"]
    assert folder == tools / f"tiny@{version}" and version.split(".")[0].isdigit()
    assert install._ensure("tiny", PACKAGE, "") == folder  # resolved once per process


def test_with_node_copies_the_hosts_node(tools):
    folder = install._ensure("tiny", PACKAGE, VERSION, with_node=True)
    node = folder / "node" / "bin" / "node"
    assert node.is_file() and os.access(node, os.X_OK)


def test_offline_a_version_not_in_the_cache_is_refused_and_an_installed_one_used(tools, monkeypatch):
    """HEMRA_OFFLINE where the planner cannot see (an ACP agent, an MCP server, a worker's cache)."""
    folder = install._ensure("tiny", PACKAGE, VERSION)
    monkeypatch.setenv("HEMRA_OFFLINE", "1")
    assert install._ensure("tiny", PACKAGE, VERSION) == folder
    with pytest.raises(install.InstallError, match=f"HEMRA would fetch {PACKAGE}@7.0.1 from npm"):
        install._ensure("tiny", PACKAGE, "7.0.1")
    assert not (tools / "tiny@7.0.1").exists()
