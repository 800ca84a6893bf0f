"""`hemra resume` and `hemra repair` through the real command, on the host sandbox, on SQLite and
PostgreSQL: a run whose workers are killed mid-way, then resumed, counts each trial once; a
cancelled run is resumed; a task edited since the run is refused by name, then allowed and
flagged."""

import os
import secrets
import signal
import subprocess
import time

import pytest

from tests.conftest import HEMRA
from tests.e2e.helpers import copy_task, hemra, show

pytestmark = pytest.mark.slow

#: Seconds a killed worker's lease lasts here (the default is 30).
LEASE_SECS = "2"


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def env(request, hemra_env):
    hemra_env["HEMRA_LEASE_SECS"] = LEASE_SECS
    if request.param == "postgres":
        hemra_env["HEMRA_DATABASE_URL"] = request.getfixturevalue("postgres_url")
    return hemra_env


def _sleepers_gone(marker: str) -> None:
    """Kill (by PID) any sleep this test's harness left behind a killed `hemra run`."""
    listed = subprocess.run(["ps", "-eo", "pid=,args="], capture_output=True, text=True).stdout
    for line in listed.splitlines():
        pid, _, args = line.strip().partition(" ")
        if marker in args:
            try:
                os.kill(int(pid), signal.SIGKILL)
            except ProcessLookupError:
                pass


def test_killed_workers__resume_counts_each_trial_once(env, tmp_path):
    marker = f"hemra-stuck-{secrets.token_hex(4)}"
    until = int(time.time()) + 20  # in the harness file, so its digest is the run's throughout
    (tmp_path / "harnesses").mkdir()
    (tmp_path / "harnesses" / "stuck.toml").write_text(
        'kind = "program"\ncommand = ["bash", "-c", '
        f'"case $HEMRA_TASK_NAME in *fix-*) [ $(date +%s) -lt {until} ] && exec -a {marker} sleep 120;; esac; exit 0"]\n'
    )
    process = subprocess.Popen(
        [HEMRA, "run", "-H", "stuck", "-d", "hemra-offline", "--concurrency", "2", "--label", "killed"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            listed = hemra(env, "show", "killed")
            if listed.returncode == 0 and '"running": 2' in listed.stdout:
                break
            time.sleep(0.3)
        else:
            pytest.fail("the run never had two attempts running")
        os.killpg(process.pid, signal.SIGKILL)  # the CLI and its workers die at once, leases held
        process.wait(timeout=10)
    finally:
        _sleepers_gone(marker)
    before = show(env, "killed")
    assert before["run"]["progress"]["running"] == 2 and before["run"]["progress"]["queued"] > 0
    while time.time() < until + 1:  # the harness stops sleeping; the killed leases run out
        time.sleep(0.5)

    resumed = hemra(env, "resume", "killed", cwd=tmp_path)
    assert resumed.returncode in (0, 1), resumed.stderr
    assert "resume queued 2 trials" in resumed.stdout and "already queued" in resumed.stdout, resumed.stdout
    assert "resumed" in resumed.stdout and "trials by attempts taken" in resumed.stdout

    after = show(env, "killed")
    trials = after["run"]["progress"]["trials"]
    row = after["report"]["datasets"][0]["rows"][0]
    assert row["trials"] == trials == 11 and after["run"]["progress"]["done"] == 11
    assert row.get("graded", 0) + row.get("infra_failed", 0) == 11  # each trial once
    assert after["report"]["trials_by_attempts"] == {"1": 9, "2": 2}
    [repair] = after["report"]["repairs"]
    assert repair["kind"] == "resume" and repair["queued"] == 2 and repair["reasons"] == ["infra"]
    again = hemra(env, "repair", "killed", "--dry-run", cwd=tmp_path)
    assert again.returncode == 0 and "would queue 0 trials" in again.stdout, again.stdout


def test_cancelled_run__changed_task_refused_then_allowed_and_flagged(hemra_env, tmp_path):
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    for name in ("fix-median", "fizzbuzz-limit"):
        copy_task(name, tasks)
    planned = hemra(hemra_env, "run", "-H", "nop", "-d", "./tasks", "--label", "edited", "--detach", cwd=tmp_path)
    assert planned.returncode == 0, planned.stderr
    assert hemra(hemra_env, "cancel", "edited").returncode == 0
    dry = hemra(hemra_env, "resume", "edited", "--dry-run", cwd=tmp_path)
    assert dry.returncode == 0 and "resume would queue 2 trials" in dry.stdout, dry.stdout + dry.stderr

    instruction = tasks / "fix-median" / "instruction.md"
    instruction.write_text(instruction.read_text() + "\nEdited after the run.\n")
    for command in ("resume", "repair"):
        refused = hemra(hemra_env, command, "edited", cwd=tmp_path)
        assert refused.returncode == 2, refused.stdout + refused.stderr
        line = refused.stderr.strip()
        assert "\n" not in line and "dataset tasks changed since the run was planned" in line, line
    assert "repairs" not in show(hemra_env, "edited")["report"]  # nothing recorded

    allowed = hemra(hemra_env, "resume", "edited", "--allow-changed", cwd=tmp_path)
    assert allowed.returncode == 0, allowed.stdout + allowed.stderr
    assert "not a fair comparison" in allowed.stdout, allowed.stdout
    report = show(hemra_env, "edited")["report"]
    assert report["unfair"] and report["trials_by_attempts"] == {"2": 2}
    [change] = report["repairs"][0]["allowed_changes"]
    assert change["what"] == "dataset tasks" and change["pinned"] != change["current"]
