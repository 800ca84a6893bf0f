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


# --------------------------------------------------------------------------- SWE-bench instance IDs (item 3)

def _swebench_with(root, iid: str, key: str = "resolved_ids"):
    """A SWE-bench run whose report lists `iid` (submitted and under `key`)."""
    from tests.importer.swebench_fixture import write_run

    folder = write_run(root)
    summary = next(folder.glob("*.json"))
    data = json.loads(summary.read_text())
    data["submitted_ids"].append(iid)
    data.setdefault(key, []).append(iid)
    summary.write_text(json.dumps(data))
    return folder


@pytest.mark.parametrize("iid", ["../../../../tmp/{unique}/x", "/etc", "..", ".", "a__b/../../c", ".hidden__x-1",
                                 "django__django-1\n", ""])
def test_swebench_instance_id_that_is_a_path__refused(iid, hemra_env, tmp_path):
    outside = tmp_path / "outside" / "x"
    outside.mkdir(parents=True)
    iid = iid.replace("{unique}", str(outside.parent).lstrip("/"))
    (outside / "report.json").write_text(json.dumps({iid: {"resolved": True}}))
    folder = _swebench_with(tmp_path / "run", iid)
    line = one_line(hemra(hemra_env, "import", str(folder), "--swebench-version", "5.0.2"))
    assert "which is not a SWE-bench instance ID" in line
    assert json.loads(hemra(hemra_env, "runs", "--json").stdout) == []


def test_swebench_instance_folder_that_is_a_symlink_out__refused(hemra_env, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "report.json").write_text(json.dumps({"z__z-9": {"resolved": True}}))
    folder = _swebench_with(tmp_path / "run", "z__z-9")
    logs = next(folder.glob("logs/run_evaluation/*/*/"))
    (logs / "z__z-9").symlink_to(outside)
    line = one_line(hemra(hemra_env, "import", str(folder), "--swebench-version", "5.0.2"))
    assert "z__z-9" in line and "leads outside" in line
    assert json.loads(hemra(hemra_env, "runs", "--json").stdout) == []


def test_swebench_real_instance_ids__accepted(hemra_env, tmp_path):
    from services.importer.swebench import INSTANCE_ID

    for iid in ("astropy__astropy-12907", "django__django-11099", "sympy__sympy-20590", "scikit-learn__scikit-learn-25500",
                "Project-MONAI__MONAI-1234", "pandas-dev__pandas.95280573.func_pm_op_change__2pd0y8q1"):
        assert INSTANCE_ID.fullmatch(iid), iid
