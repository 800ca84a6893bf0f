"""No child process HEMRA starts imports code from the working directory (DESIGN rule 6).

`hemra` is run, through its real entry point, from a folder holding look-alike packages of
HEMRA's own and of what it imports (a cloned repository, say): each package's __init__ leaves a
marker. Every kind of process the commands start (the warm store a read command leaves, the
sandbox's commands, a program harness and the `hemra harness` commands it runs, the verifier)
must leave none."""

import os
import time
from pathlib import Path

import pytest

from hemra.services.common import children
from hemra.services.store import warm
from tests.cli.test_warm import wait_warm
from tests.e2e.helpers import copy_task, hemra, runs, show

#: HEMRA's own packages, and packages HEMRA's processes import.
LOOK_ALIKES = ("services", "hemra", "clients", "gateway", "grpc", "google", "sqlalchemy", "numpy", "msgspec")


def plant(folder: Path, markers: Path) -> None:
    """Look-alike packages in `folder`, each writing `markers`/<name> when imported."""
    markers.mkdir(exist_ok=True)
    for name in LOOK_ALIKES:
        (folder / name).mkdir(parents=True)
        (folder / name / "__init__.py").write_text(f"open({str(markers / name)!r}, 'w').close()\n")


@pytest.fixture
def cloned(tmp_path):
    folder, markers = tmp_path / "cloned", tmp_path / "markers"
    plant(folder, markers)
    return folder, markers


def test_a_read_commands_warm_store_imports_nothing_from_the_working_folder(hemra_env, cloned):
    folder, markers = cloned
    env = dict(hemra_env, HEMRA_WARM_STORE="60")
    home = Path(env["HEMRA_HOME"])
    try:
        listed = hemra(env, "runs", "--json", cwd=folder)
        assert listed.returncode == 0, listed.stderr
        state = _warm_or_marked(home, markers)  # the warm store started, from the cloned folder
        again = hemra(env, "runs", "--json", cwd=folder)
        assert again.returncode == 0 and again.stdout == listed.stdout, again.stderr
        assert wait_warm(home)["pid"] == state["pid"]
    finally:
        warm.stop(home)
    assert sorted(os.listdir(markers)) == []


@pytest.mark.slow
def test_a_run_and_its_harness_import_nothing_from_the_working_folder(hemra_env, cloned):
    """A run file, its program harness and the dataset all in the cloned folder, `hemra run`
    started there: the sandbox's commands, the harness program and the `hemra harness`
    commands it runs (from its own folder, which holds look-alikes too), and the verifier."""
    folder, markers = cloned
    plant(folder / "harnesses", markers)
    (folder / "harnesses" / "scripted.toml").write_text('kind = "program"\ncommand = ["bash", "scripted.sh"]\n')
    (folder / "harnesses" / "scripted.sh").write_text(
        "hemra harness exec 'tac /app/data/steps.txt > /app/reversed.txt'\n"
    )
    copy_task("reverse-lines", folder / "ds")
    (folder / "run.toml").write_text('name = "cloned"\nharnesses = ["scripted", "oracle"]\ndatasets = ["./ds"]\n')
    result = hemra(hemra_env, "run", "run.toml", cwd=folder)
    assert result.returncode == 0, result.stderr
    rewards = {a["harness_name"]: a["score"]["rewards"] for a in show(hemra_env, "cloned")["attempts"]}
    assert rewards == {"scripted": {"reward": 1.0}, "oracle": {"reward": 1.0}}
    assert len(runs(hemra_env)) == 1
    assert sorted(os.listdir(markers)) == []


def _warm_or_marked(home: Path, markers: Path, timeout: float = 60) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert sorted(os.listdir(markers)) == []
        if warm.read_state(home) and warm._alive(home):
            return warm.read_state(home)
        time.sleep(0.1)
    raise AssertionError(f"no warm store in {home} after {timeout} s")


def test_the_childs_pythonpath_keeps_absolute_entries_only():
    """An empty or relative PYTHONPATH entry names the working folder (even under -P)."""
    env = children.environment(
        {"PYTHONPATH": os.pathsep.join(["", "/opt/hemra", ".", "src", "/srv/lib", ""]), "A": "1"}
    )
    assert env == {"PYTHONPATH": "/opt/hemra" + os.pathsep + "/srv/lib", "A": "1"}
    assert children.environment({"PYTHONPATH": ":."}) == {}
    assert children.python_module("hemra.services.store.warm")[1:] == ["-P", "-m", "hemra.services.store.warm"]
