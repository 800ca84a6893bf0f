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


def _killed_mid_way(env, tmp_path, label: str) -> None:
    """`hemra run` of 11 tasks killed (SIGKILL, with its workers) while two attempts run and six
    are queued. Returns when the harness no longer sleeps and the killed leases ran out."""
    marker = f"hemra-stuck-{secrets.token_hex(4)}"
    # The harness sleeps while this file is there: its path is in the harness file, so the
    # harness's digest is the run's throughout, and its resumed attempts finish at once.
    stuck = tmp_path / "stuck"
    stuck.touch()
    (tmp_path / "harnesses").mkdir()
    (tmp_path / "harnesses" / "stuck.toml").write_text(
        'kind = "program"\ncommand = ["bash", "-c", '
        f'"case $HEMRA_TASK_NAME in *fix-*) [ -e {stuck} ] && exec -a {marker} sleep 120;; esac; exit 0"]\n'
    )
    log = tmp_path / "run.log"
    process = subprocess.Popen(
        [HEMRA, "run", "-H", "stuck", "-d", "hemra-offline", "--concurrency", "2", "--label", label],
        cwd=tmp_path,
        env=env,
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            listed = hemra(env, "show", label)
            if listed.returncode == 0 and '"running": 2' in listed.stdout:
                break
            time.sleep(0.3)
        else:
            pytest.fail(
                f"the run never had two attempts running: {listed.stdout[-1500:]}{listed.stderr[-500:]}\n{log.read_text()[-1500:]}"
            )
        os.killpg(process.pid, signal.SIGKILL)  # the CLI and its workers die at once, leases held
        process.wait(timeout=10)
    finally:
        _sleepers_gone(marker)
    before = show(env, label)
    assert before["run"]["progress"]["running"] == 2 and before["run"]["progress"]["queued"] == 6
    stuck.unlink()  # the harness stops sleeping
    time.sleep(float(LEASE_SECS) + 1)  # the killed workers' leases run out


def test_killed_workers__resume_counts_each_trial_once(env, tmp_path):
    _killed_mid_way(env, tmp_path, "killed")
    resumed = hemra(env, "resume", "killed", cwd=tmp_path)
    assert resumed.returncode in (0, 1), resumed.stderr
    assert "resume queued 2 trials (6 already queued)" in resumed.stdout, resumed.stdout
    assert "resumed" in resumed.stdout and "trials by attempts taken: 9 in 1, 2 in 2" in resumed.stdout

    after = show(env, "killed")
    row = after["report"]["datasets"][0]["rows"][0]
    assert row["trials"] == after["run"]["progress"]["trials"] == 11 and after["run"]["progress"]["done"] == 11
    assert row.get("graded", 0) == 11  # each trial once, every one scored
    assert after["report"]["trials_by_attempts"] == {"1": 9, "2": 2}
    [repair] = after["report"]["repairs"]
    assert repair["kind"] == "resume" and repair["queued"] == 2 and repair["reasons"] == ["infra"]
    again = hemra(env, "repair", "killed", "--dry-run", cwd=tmp_path)
    assert again.returncode == 0 and "would queue 0 trials" in again.stdout, again.stdout


def test_killed_workers__finished_run_repaired_only_its_infra_failures(env, tmp_path):
    _killed_mid_way(env, tmp_path, "lost")
    # Nothing failed for the scorer: nothing queued; the queue the killed run left is worked, and
    # its lost workers' attempts close as infrastructure failures (no retries by default).
    finished = hemra(env, "repair", "lost", "--scorer", cwd=tmp_path)
    assert "repair queued 0 trials (6 already queued, 2 still running)" in finished.stdout, finished.stdout
    assert finished.returncode == 1, finished.stdout + finished.stderr  # two infra failures: incomplete
    before = show(env, "lost")
    row = before["report"]["datasets"][0]["rows"][0]
    assert (row.get("graded", 0), row["infra_failed"]) == (9, 2)
    assert before["report"]["repairs"] == []  # a repair that queued nothing records nothing

    dry = hemra(env, "repair", "lost", "--dry-run", cwd=tmp_path)
    assert dry.stdout.count("would queue hemra-offline/stuck") == 2 and "infra (attempt 2" in dry.stdout, dry.stdout
    repaired = hemra(env, "repair", "lost", "--infra", cwd=tmp_path)
    assert repaired.returncode == 0, repaired.stdout + repaired.stderr
    after = show(env, "lost")
    row = after["report"]["datasets"][0]["rows"][0]
    assert (row.get("graded", 0), row.get("infra_failed", 0), row["trials"]) == (11, 0, 11)
    assert after["report"]["trials_by_attempts"] == {"1": 9, "2": 2}
    assert len(after["attempts"]) == 13  # the lost attempts stay beside their repairs
    repaired_trials = {a["trial_id"] for a in after["attempts"] if a["number"] == 2}
    lost_trials = {a["trial_id"] for a in before["attempts"] if a["outcome"] == "OUTCOME_INFRA_FAILED"}
    assert repaired_trials == lost_trials and len(lost_trials) == 2


def test_cancelled_run__changed_task_refused_then_allowed_and_flagged(hemra_env, tmp_path):
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    for name in ("fix-median", "fizzbuzz-limit"):
        copy_task(name, tasks)
    planned = hemra(hemra_env, "run", "-H", "nop", "-d", "./tasks", "--label", "edited", "--detach", cwd=tmp_path)
    assert planned.returncode == 0, planned.stderr
    assert hemra(hemra_env, "cancel", "edited").returncode == 0
    unknown = hemra(hemra_env, "repair", "no-such-run", cwd=tmp_path)
    assert unknown.returncode == 2 and unknown.stderr.count("\n") == 1 and "no-such-run" in unknown.stderr
    dry = hemra(hemra_env, "resume", "edited", "--dry-run", cwd=tmp_path)
    assert dry.returncode == 0 and "resume would queue 2 trials" in dry.stdout, dry.stdout + dry.stderr

    instruction = tasks / "fix-median" / "instruction.md"
    instruction.write_text(instruction.read_text() + "\nEdited after the run.\n")
    for command in ("resume", "repair"):
        refused = hemra(hemra_env, command, "edited", cwd=tmp_path)
        assert refused.returncode == 2, refused.stdout + refused.stderr
        line = refused.stderr.strip()
        assert "\n" not in line and "dataset tasks changed since the run was planned" in line, line
    assert show(hemra_env, "edited")["report"]["repairs"] == []  # nothing recorded

    allowed = hemra(hemra_env, "resume", "edited", "--allow-changed", cwd=tmp_path)
    assert allowed.returncode == 0, allowed.stdout + allowed.stderr
    assert "not a fair comparison" in allowed.stdout, allowed.stdout
    report = show(hemra_env, "edited")["report"]
    assert report["unfair"] and report["trials_by_attempts"] == {"2": 2}
    [change] = report["repairs"][0]["allowed_changes"]
    assert change["what"] == "dataset tasks" and change["pinned"] != change["current"]
