"""The warm store (services/store/warm.py): a read command leaves a store server behind for
the next ones on the same machine, which then load none of the store's code. Real processes,
a real SQLite file; every warm store a test starts is stopped by it."""

import json
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hemra.services.store import warm
from hemra.services.store.service import Store
from tests.e2e.helpers import hemra

#: Runs a command in this process and says whether the store's code was loaded for it.
PROBE = """
import json, sys
from hemra.clients.cli.main import main
sys.argv = ["hemra", *sys.argv[1:]]
try:
    main()
except SystemExit as exc:
    assert not exc.code, exc.code
print(json.dumps("sqlalchemy" in sys.modules), file=sys.stderr)
"""


def probe(env: dict, *args: str) -> tuple[str, bool]:
    """The command's output, and whether it loaded SQLAlchemy (it opened the store itself)."""
    done = subprocess.run([sys.executable, "-c", PROBE, *args], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout, json.loads(done.stderr.strip().splitlines()[-1])


def wait_warm(home: Path, timeout: float = 60) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        state = warm.read_state(home)
        if state and warm._alive(home):
            return state
        time.sleep(0.1)
    raise AssertionError(f"no warm store in {home} after {timeout} s")


def wait_gone(pid: int, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not Path(f"/proc/{pid}").exists() or "zombie" in _status(pid):
            return
        time.sleep(0.1)
    raise AssertionError(f"warm store {pid} still running after {timeout} s")


def _status(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/status").read_text().lower()
    except OSError:
        return "gone"


@pytest.fixture
def warm_env(hemra_env, tmp_path):
    env = dict(hemra_env, HEMRA_WARM_STORE="120")
    recorded = hemra(
        env, "run", "-H", "oracle", "-d", "hemra-offline", "-t", "hemra/text-stats", "--detach", cwd=tmp_path
    )
    assert recorded.returncode == 0, recorded.stderr
    yield env
    warm.stop(Path(env["HEMRA_HOME"]))  # the one this test's read commands left
    assert not warm._alive(Path(env["HEMRA_HOME"]))


def test_a_read_command_leaves_a_warm_store_and_the_next_ones_use_it(warm_env):
    home = Path(warm_env["HEMRA_HOME"])
    cold_runs, loaded = probe(warm_env, "runs", "--json")
    assert loaded  # the first opens the store itself...
    state = wait_warm(home)  # ...and leaves one behind
    assert (home / warm.STATE_FILE).stat().st_mode & 0o777 == 0o600  # it holds the warm store's token
    run_id = json.loads(cold_runs)[0]["id"]
    cold_show, _ = probe(dict(warm_env, HEMRA_WARM_STORE="0"), "show", run_id)

    warm_runs, loaded = probe(warm_env, "runs", "--json")
    assert not loaded and warm_runs == cold_runs
    warm_show, loaded = probe(warm_env, "show", run_id)
    assert not loaded and warm_show == cold_show
    assert wait_warm(home)["pid"] == state["pid"]  # the same one served both


def test_a_warm_store_sees_what_another_process_wrote(warm_env, tmp_path):
    home = Path(warm_env["HEMRA_HOME"])
    hemra(warm_env, "runs")
    wait_warm(home)
    cancelled = hemra(warm_env, "cancel", json.loads(probe(warm_env, "runs", "--json")[0])[0]["id"])
    assert cancelled.returncode == 0, cancelled.stderr
    again = hemra(
        warm_env, "run", "-H", "nop", "-d", "hemra-offline", "-t", "hemra/text-stats", "--detach", cwd=tmp_path
    )
    assert again.returncode == 0, again.stderr
    listed, loaded = probe(warm_env, "runs", "--json")
    assert not loaded
    runs = json.loads(listed)
    counted = [{k: v for k, v in run["progress"].items() if v} for run in runs]  # --json prints the zeros too
    assert len(runs) == 2 and counted[0] == {"trials": 1, "queued": 1}
    assert counted[1] == {"trials": 1, "done": 1, "cancelled": 1}


def test_a_warm_store_of_other_settings_is_stopped_not_used(warm_env, tmp_path):
    home = Path(warm_env["HEMRA_HOME"])
    hemra(warm_env, "runs")
    first = wait_warm(home)
    other = dict(warm_env, HEMRA_BLOB_DIR=str(tmp_path / "other-blobs"))  # another key: another store
    _, loaded = probe(other, "runs", "--json")
    assert loaded
    wait_gone(first["pid"])
    assert wait_warm(home)["pid"] != first["pid"]  # the command left one for its own settings


def test_a_dead_warm_stores_state_file_is_ignored(hemra_env):
    home = Path(hemra_env["HEMRA_HOME"])
    home.mkdir(parents=True)
    (home / warm.STATE_FILE).write_text(json.dumps({"pid": 1, "address": "127.0.0.1:9", "token": "t", "key": "k"}))
    (home / warm.LOCK_FILE).touch()  # nobody holds it
    assert warm.find(home, f"sqlite:///{home / 'hemra.db'}", home / "blobs") is None
    listed = hemra(hemra_env, "runs", "--json")  # warm stores are off here: the command opens the store
    assert listed.returncode == 0 and json.loads(listed.stdout) == [], listed.stderr
    assert not warm._alive(home)


def test_an_idle_warm_store_exits(warm_env):
    home = Path(warm_env["HEMRA_HOME"])
    hemra(dict(warm_env, HEMRA_WARM_STORE="2"), "runs")
    pid = wait_warm(home)["pid"]
    wait_gone(pid, timeout=warm.DRAIN_SECS + 20)
    assert warm.read_state(home) == {} and not warm._alive(home)


def test_a_warm_store_nobody_can_find_exits(warm_env):
    home = Path(warm_env["HEMRA_HOME"])
    hemra(warm_env, "runs")
    pid = wait_warm(home)["pid"]
    (home / warm.STATE_FILE).unlink()  # HEMRA_HOME emptied under it
    wait_gone(pid, timeout=10 + warm.DRAIN_SECS + 20)


def test_the_setting(monkeypatch):
    for value, expected in (("", warm.DEFAULT_IDLE_SECS), ("0", 0.0), ("2.5", 2.5), ("-1", 0.0), ("soon", 0.0)):
        monkeypatch.setenv(warm.IDLE_ENV, value)
        assert warm.idle_secs() == expected
    assert warm.eligible("sqlite:////home/me/.hemra/hemra.db")
    assert not warm.eligible("postgresql://root@127.0.0.1/hemra") and not warm.eligible("sqlite:///:memory:")


async def test_the_watch_forgets_what_the_store_kept_when_another_connection_commits(tmp_path):
    path = tmp_path / "hemra.db"
    store = await Store.open(f"sqlite:///{path}", tmp_path / "blobs")
    watch = warm.Watch(store, str(path))
    try:
        store._settled["run-1"] = ({}, {})
        store._reports["run-1"] = store._facts["run-1"] = object()
        pinned = store.pinned
        watch.before_call()  # nothing written since the watch began: everything kept
        assert "run-1" in store._settled and store.pinned is pinned
        other = sqlite3.connect(path)
        other.execute("UPDATE runs SET label = label")  # a commit, even of nothing
        other.execute("CREATE TABLE written (x)")
        other.commit()
        other.close()
        watch.before_call()
        assert not store._settled and not store._reports and not store._facts and store.pinned is not pinned
    finally:
        watch.close()
        await store.close()
