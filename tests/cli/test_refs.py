"""`hemra cancel`, `show` and `export` take a run's or import's ID or label, a job ID or an attempt ID."""

import json
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import HEMRA
from tests.e2e.helpers import hemra, show
from tests.importer.swebench_fixture import write_run

pytestmark = pytest.mark.slow
TWO_TASKS = ("-t", "hemra/fix-median", "-t", "hemra/text-stats")


def job_of(env: dict, attempt_id: str) -> str:
    """The ID of the job that works an attempt (users meet it in worker logs), read from the store."""
    with sqlite3.connect(Path(env["HEMRA_HOME"]) / "hemra.db") as db:
        return db.execute("SELECT id FROM jobs WHERE attempt_id = ?", (attempt_id,)).fetchone()[0]


def states(env: dict, ref: str) -> dict[str, tuple[str, str]]:
    return {a["id"]: (a["state"], a.get("outcome", "")) for a in show(env, ref)["attempts"]}


def test_cancel__by_attempt_and_job_cancels_only_that_trial(hemra_env):
    queued = hemra(hemra_env, "run", "-H", "nop", "-d", "hemra-offline", *TWO_TASKS, "--label", "later", "--detach")
    assert queued.returncode == 0, queued.stderr
    first, second = sorted(states(hemra_env, "later"))
    result = hemra(hemra_env, "cancel", first)
    assert result.returncode == 0, result.stderr
    assert "cancelled its trial's unfinished attempt" in result.stdout
    assert states(hemra_env, "later") == {
        first: ("ATTEMPT_STATE_FINISHED", "OUTCOME_CANCELLED"),
        second: ("ATTEMPT_STATE_QUEUED", "OUTCOME_UNSPECIFIED"),  # --json prints every field
    }
    again = hemra(hemra_env, "cancel", first)
    assert again.returncode == 0 and "nothing to cancel" in again.stdout
    assert hemra(hemra_env, "cancel", job_of(hemra_env, second)).returncode == 0
    assert set(states(hemra_env, "later").values()) == {("ATTEMPT_STATE_FINISHED", "OUTCOME_CANCELLED")}
    assert show(hemra_env, "later")["run"].get("cancel_requested", False) is False


def test_cancel__a_running_attempt_stops_and_the_run_goes_on(hemra_env, tmp_path):
    (tmp_path / "harnesses").mkdir()
    (tmp_path / "harnesses" / "sleepy.toml").write_text('kind = "program"\ncommand = ["sleep", "120"]\n')
    process = subprocess.Popen(
        [HEMRA, "run", "-H", "sleepy", "-d", "hemra-offline", *TWO_TASKS, "--concurrency", "2", "--label", "busy"],
        cwd=tmp_path,
        env=hemra_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            listed = hemra(hemra_env, "show", "busy")
            if listed.returncode == 0 and listed.stdout.count('"ATTEMPT_STATE_RUNNING"') == 2:
                break
            time.sleep(0.3)
        first, second = sorted(states(hemra_env, "busy"))
        assert hemra(hemra_env, "cancel", first).returncode == 0
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and _sleepers() > 1:
            time.sleep(0.3)
        assert _sleepers() == 1, "the cancelled attempt's process still runs"
        assert states(hemra_env, "busy") == {
            first: ("ATTEMPT_STATE_FINISHED", "OUTCOME_CANCELLED"),
            second: ("ATTEMPT_STATE_RUNNING", "OUTCOME_UNSPECIFIED"),  # --json prints every field
        }
        assert hemra(hemra_env, "cancel", "busy").returncode == 0
        process.wait(timeout=30)
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
            process.wait(timeout=30)
    assert set(states(hemra_env, "busy").values()) == {("ATTEMPT_STATE_FINISHED", "OUTCOME_CANCELLED")}


def _sleepers() -> int:
    listing = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    return sum(1 for line in listing.splitlines() if line.strip() == "sleep 120")


def test_cancel__refuses_imports_and_unknown_references(hemra_env, tmp_path):
    write_run(tmp_path / "swe")
    imported = hemra(hemra_env, "import", str(tmp_path / "swe"), "--swebench-version", "5.0.2", "--label", "swe")
    assert imported.returncode == 0, imported.stderr
    before = show(hemra_env, "swe")
    attempt = before["attempts"][0]["id"]
    for ref in ("swe", before["run"]["id"], attempt):
        result = hemra(hemra_env, "cancel", ref)
        assert result.returncode == 2, result.stdout + result.stderr
        [line] = result.stderr.strip().splitlines()
        assert "is an import: imports cannot be cancelled" in line
    assert show(hemra_env, "swe") == before
    for ref in ("nothing-by-that-name", "a-0000000000zzzzzzzz", "j-0000000000zzzzzzzz"):
        result = hemra(hemra_env, "cancel", ref)
        assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_show_and_export__take_every_kind_of_reference(hemra_env, tmp_path):
    assert hemra(hemra_env, "run", "-H", "oracle", "-d", "hemra-offline", *TWO_TASKS, "--label", "done").returncode == 0
    write_run(tmp_path / "swe")
    assert (
        hemra(hemra_env, "import", str(tmp_path / "swe"), "--swebench-version", "5.0.2", "--label", "swe").returncode
        == 0
    )
    run = show(hemra_env, "done")
    attempt = run["attempts"][0]
    job = job_of(hemra_env, attempt["id"])
    assert show(hemra_env, run["run"]["id"])["run"] == run["run"]
    assert show(hemra_env, job)["attempt"] == show(hemra_env, attempt["id"])["attempt"] == attempt
    imported = show(hemra_env, "swe")
    assert show(hemra_env, imported["run"]["id"])["run"] == imported["run"]
    assert show(hemra_env, imported["attempts"][0]["id"])["attempt"]["run_id"] == imported["run"]["id"]
    for name, ref in (
        ("by-label", "done"),
        ("by-id", run["run"]["id"]),
        ("import-label", "swe"),
        ("import-id", imported["run"]["id"]),
    ):
        result = hemra(hemra_env, "export", ref, "--out", str(tmp_path / name))
        assert result.returncode == 0, result.stderr
    for name, ref in (("by-attempt", attempt["id"]), ("by-job", job)):
        result = hemra(hemra_env, "export", ref, "--out", str(tmp_path / name))
        assert result.returncode == 0, result.stderr
        manifest = json.loads((tmp_path / name / "hemra-export.json").read_text())
        assert [a["id"] for a in manifest["attempts"]] == [attempt["id"]]
        assert [x["id"] for x in manifest["trials"]] == [attempt["trial_id"]]
        fresh = dict(hemra_env, HEMRA_HOME=str(tmp_path / f"fresh-{name}"))
        assert hemra(fresh, "import", str(tmp_path / name)).returncode == 0
        # The same attempt and events, of the import the export became (an import ID, same characters).
        restored, original = show(fresh, attempt["id"], "--events"), show(hemra_env, attempt["id"], "--events")
        import_id = "i-" + attempt["run_id"][2:]
        assert restored["attempt"]["run_id"] == import_id
        assert restored["attempt"]["name"] == f"runs/{import_id}/attempts/{attempt['id']}"
        # No job worked the import's copy: only the original names its job.
        assert restored["attempt"]["job_id"] == "" and original["attempt"]["job_id"].startswith("j-")
        for shown in (restored, original):
            del shown["attempt"]["run_id"], shown["attempt"]["name"], shown["attempt"]["job_id"]
        assert restored == original
    swe_attempt = next(a for a in imported["attempts"] if a.get("artifacts"))
    out = tmp_path / "swe-attempt"
    assert hemra(hemra_env, "export", swe_attempt["id"], "--out", str(out)).returncode == 0
    kept = sorted(p.relative_to(out / "source").as_posix() for p in (out / "source").rglob("*") if p.is_file())
    assert kept == sorted(a["path"] for a in swe_attempt["artifacts"])


def test_compare_bad_input__one_line_exit_2(hemra_env):
    queued = hemra(
        hemra_env, "run", "-H", "nop", "-H", "oracle", "-d", "hemra-offline", *TWO_TASKS, "--label", "two", "--detach"
    )
    assert queued.returncode == 0, queued.stderr
    cases = {
        ("nope", "two/nop"): "no run or import by that ID or label",
        ("two", "two/nop"): "holds several harnesses (nop, oracle); name one",
        ("two/nobody", "two/nop"): "has no cell 'nobody'",
        ("two", "--criteria"): "--criteria and --judge compare two sides",
    }
    for args, fragment in cases.items():
        result = hemra(hemra_env, "compare", *args)
        assert result.returncode == 2, (args, result.stdout, result.stderr)
        [line] = result.stderr.strip().splitlines()
        assert fragment in line, (args, line)
