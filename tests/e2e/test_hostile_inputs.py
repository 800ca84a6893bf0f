"""Hostile inputs end to end (issue 12): crafted exports and imports, listeners on every interface.
Each refusal is one line naming the problem, exit 2, and the store unchanged."""

import json
import subprocess
import sys

import pytest

from tests.conftest import HEMRA
from tests.e2e.helpers import hemra

pytestmark = pytest.mark.slow

SERVICES = {"store": [], "planner": ["--store", "127.0.0.1:1"], "executor": ["--store", "127.0.0.1:1"],
            "scorer": ["--store", "127.0.0.1:1"], "importer": ["--store", "127.0.0.1:1", "--planner", "127.0.0.1:1"]}


def one_line(result: subprocess.CompletedProcess) -> str:
    assert result.returncode == 2, result.stdout + result.stderr
    [line] = result.stderr.strip().splitlines()
    return line


LISTEN = [(name, ["--listen", "0.0.0.0:0"]) for name in SERVICES] + [
    ("store", ["--listen", "[::]:0"]), ("store", ["--listen", ":0"]), ("scorer", ["--listen=0.0.0.0:0"]),
    ("store", ["--lis", "0.0.0.0:0"])]


@pytest.mark.parametrize("name,args", LISTEN)
def test_service_listen_on_every_interface__needs_expose(name, args, hemra_env):
    result = hemra(hemra_env, "service", name, *args, *SERVICES[name], timeout=60)
    listen = args[-1].removeprefix("--listen=")
    assert f"--listen {listen} is not a loopback address; add --expose" in one_line(result)


@pytest.mark.parametrize("module", ["services.store", "services.importer"])
def test_service_module_listen_on_every_interface__needs_expose(module, hemra_env):
    args = ["--store", "127.0.0.1:1", "--planner", "127.0.0.1:1"] if module == "services.importer" else []
    result = subprocess.run([sys.executable, "-m", module, "--listen", "0.0.0.0:0", *args], env=hemra_env,
                            capture_output=True, text=True, timeout=60)
    assert "0.0.0.0:0 is not a loopback address; add --expose" in one_line(result)


def test_service_store_with_expose__listens(hemra_env):
    env = dict(hemra_env, HEMRA_TOKEN="t" * 32)
    process = subprocess.Popen([HEMRA, "service", "store", "--listen", "0.0.0.0:0", "--expose"], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = process.stdout.readline()
        assert line.startswith("store listening on 0.0.0.0:"), line + process.stderr.read()
    finally:
        process.terminate()
        process.wait(timeout=30)
