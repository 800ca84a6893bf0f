"""A store that cannot write (issue 31, item 10): its file system full (a real tmpfs, filled
mid-run) or read-only, its blob folder full, its PostgreSQL refusing writes. `hemra run` says
once which path or database, stops claiming, leaves queued trials queued, hands back the running
attempt (or leaves it to its lease when the store cannot take even that), and exits 1. Earlier
runs stay readable, and the run goes on once the store can write again. It printed five
tracebacks and heartbeated into the error before."""

import asyncio
import json
import os
import sqlite3
import subprocess
import time
from pathlib import Path

import asyncpg
import pytest

from hemra.services.store import db
from tests.conftest import HEMRA
from tests.e2e.helpers import copy_task, hemra
from tests.e2e.queue_helpers import assert_each_trial_once, finished, start, stop, wait_for

pytestmark = pytest.mark.slow

#: A short lease: heartbeats every second, and a lease left behind runs out in 3 s.
LEASE_SECS = 3


@pytest.fixture
def small_fs(tmp_path):
    """A 16 MiB tmpfs of its own (a full disk without filling the machine's), unmounted after."""
    folder = tmp_path / "fs"
    folder.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", str(folder)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (needs root): {mounted.stderr.decode().strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=True)


def fill(folder: Path) -> Path:
    """Write zeros into `folder` until its file system has no room left."""
    filler = folder / "filler"
    with open(filler, "wb", buffering=0) as out:
        try:
            while True:
                out.write(b"\0" * (1 << 16))
        except OSError:
            pass
    return filler


def dataset(tmp_path: Path, count: int) -> str:
    """`count` tasks whose solution takes a moment and leaves a file of its own (a new blob
    every attempt: identical artifacts are stored once)."""
    folder = tmp_path / "tasks"
    for index in range(count):
        task = copy_task("reverse-lines", folder, f"slow-{index:02d}")
        solve = task / "solution" / "solve.sh"
        solve.write_text(
            solve.read_text().replace(
                "#!/bin/bash\n", "#!/bin/bash\nsleep 0.5\nmkdir -p /logs/artifacts; date +%s%N > /logs/artifacts/t\n", 1
            )
        )
    return str(folder)


def run_in_background(env: dict, tasks: str, *flags: str) -> subprocess.Popen:
    args = [HEMRA, "run", "-H", "oracle", "-d", tasks, "--label", "filled", "--max-infra-retries", "1", *flags]
    return subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def sqlite_rows(path: Path, sql: str) -> list[tuple]:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def finished_attempts(path: Path) -> int:
    try:
        return sqlite_rows(
            path,
            "SELECT count(*) FROM attempts a JOIN runs r ON r.id = a.run_id "
            "WHERE r.label = 'filled' AND a.state = 'finished'",
        )[0][0]
    except sqlite3.Error:  # not created yet
        return 0


QUEUE_STATE = """
SELECT j.state, a.state, a.released, count(*) FROM jobs j JOIN attempts a ON a.id = j.attempt_id
JOIN runs r ON r.id = j.run_id WHERE r.label = 'filled' GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
"""


def stopped_line(where: str, reason: str) -> str:
    return (
        f"error: the store cannot write: the file system holding {where} is {reason}; "
        "stopped claiming, queued trials stay queued"
    )


LEFT = (
    "; 1 running attempt could not be handed back: once its lease (3 s) runs out, "
    "the next claim closes it as a lost worker's (an infrastructure failure)"
)


def the_one_line(result_stderr: str) -> str:
    """The error line, once everything else on stderr is the progress bar's."""
    lines = [line for line in result_stderr.splitlines() if line.strip()]
    assert "Traceback" not in result_stderr and "heartbeat" not in result_stderr, result_stderr
    errors = [line for line in lines if not line.startswith("attempts ")]
    assert len(errors) == 1, result_stderr
    return errors[0]


def readable(env: dict) -> dict[str, dict]:
    listed = hemra(env, "runs", "--json")
    assert listed.returncode == 0, listed.stderr
    return {run["label"]: run["progress"] for run in json.loads(listed.stdout)}


def test_full_file_system_under_the_store__one_line_queue_kept_and_the_run_goes_on_later(hemra_env, small_fs, tmp_path):
    env = dict(
        hemra_env,
        HEMRA_DATABASE_URL=f"sqlite:///{small_fs / 'hemra.db'}",
        HEMRA_BLOB_DIR=str(small_fs / "blobs"),
        HEMRA_LEASE_SECS=str(LEASE_SECS),
    )
    tasks = dataset(tmp_path, 6)
    earlier = hemra(env, "run", "-H", "oracle", "-d", tasks, "-t", "slow-00", "--label", "earlier")
    assert earlier.returncode == 0, earlier.stderr
    running = run_in_background(env, tasks, "--concurrency", "1")
    try:
        wait_for(lambda: finished_attempts(small_fs / "hemra.db") >= 1, 60, step=0.05)
        filler = fill(small_fs)
        _, stderr = running.communicate(timeout=60)
    finally:
        if running.poll() is None:
            running.kill()
    assert running.returncode == 1
    line = the_one_line(stderr)
    assert line in (stopped_line(small_fs, "full (database or disk is full)") + suffix for suffix in ("", LEFT)), line
    # Still full: what was recorded reads as it was.
    progress = readable(env)
    assert progress["earlier"]["passed"] == 1 and progress["earlier"]["done"] == 1
    assert progress["filled"]["trials"] == 6 and progress["filled"]["done"] >= 1
    states = sqlite_rows(small_fs / "hemra.db", QUEUE_STATE)
    left = [row for row in states if row[0] == "leased"]
    # Queued jobs stay queued with queued attempts; a job left leased holds its running attempt.
    assert {row[:2] for row in states} <= {("done", "finished"), ("queued", "queued"), ("leased", "running")}
    assert sum(row[3] for row in left) == (1 if line.endswith(LEFT) else 0), states
    # Room again: the lease runs out, a worker takes the queue up and every trial ends once.
    filler.unlink()
    time.sleep(LEASE_SECS + 0.5)
    serve = start(env, "serve", "--concurrency", "2", "--store-listen", "127.0.0.1:0", log=tmp_path / "serve.log")
    try:
        wait_for(lambda: finished(env, "filled"), 60)
    finally:
        stop(serve)
    assert_each_trial_once(env, "filled", 6)


def test_read_only_file_system_under_the_store__one_line_nothing_written(hemra_env, small_fs, tmp_path):
    env = dict(
        hemra_env, HEMRA_DATABASE_URL=f"sqlite:///{small_fs / 'hemra.db'}", HEMRA_BLOB_DIR=str(small_fs / "blobs")
    )
    tasks = dataset(tmp_path, 2)
    earlier = hemra(env, "run", "-H", "oracle", "-d", tasks, "--label", "earlier")
    assert earlier.returncode == 0, earlier.stderr
    subprocess.run(["mount", "-o", "remount,ro", str(small_fs)], check=True)
    before = readable(env)
    refused = hemra(env, "run", "-H", "oracle", "-d", tasks, "--label", "refused")
    assert refused.returncode == 1
    assert refused.stderr == (
        f"error: the store cannot write: the file system holding {small_fs} is read-only "
        "(attempt to write a readonly database)\n"
    )
    assert readable(env) == before and before["earlier"]["passed"] == 2


def test_full_blob_folder__the_running_attempt_goes_back_to_the_queue_uncounted(hemra_env, small_fs, tmp_path):
    """The database has room, the blob folder has none: the attempt whose artifacts could not be
    kept is handed back at once (released: no retry used), and the line names the blob folder."""
    env = dict(hemra_env, HEMRA_DATABASE_URL=f"sqlite:///{tmp_path / 'hemra.db'}", HEMRA_BLOB_DIR=str(small_fs))
    tasks = dataset(tmp_path, 4)
    running = run_in_background(env, tasks, "--concurrency", "1")
    try:
        wait_for(lambda: finished_attempts(tmp_path / "hemra.db") >= 1, 60, step=0.05)
        fill(small_fs)
        _, stderr = running.communicate(timeout=60)
    finally:
        if running.poll() is None:
            running.kill()
    assert running.returncode == 1
    assert the_one_line(stderr) == stopped_line(small_fs, "full (No space left on device)")
    states = sqlite_rows(tmp_path / "hemra.db", QUEUE_STATE)
    # The attempt in hand closed released (not failed, no retry used), its trial queued again.
    assert ("done", "finished", 1, 1) in states
    assert not [row for row in states if row[0] == "leased"], states
    done, queued = (sum(row[3] for row in states if row[0] == state) for state in ("done", "queued"))
    assert done - 1 + queued == 4  # every trial either passed or is queued
    released = sqlite_rows(tmp_path / "hemra.db", "SELECT error FROM attempts WHERE released")
    assert released == [("released: worker stopped",)]


@pytest.mark.postgres
def test_postgresql_turning_read_only_mid_run__one_line_queue_kept(hemra_env, postgres_url, tmp_path):
    env = dict(
        hemra_env,
        HEMRA_DATABASE_URL=postgres_url,
        HEMRA_BLOB_DIR=str(tmp_path / "blobs"),
        HEMRA_LEASE_SECS=str(LEASE_SECS),
    )
    name = postgres_url.rsplit("/", 1)[1]
    dsn = db.asyncpg_dsn(db.normalize_url(postgres_url))

    async def query(sql: str):
        conn = await asyncpg.connect(dsn.rsplit("/", 1)[0] + "/postgres")
        try:
            return await conn.fetch(sql)
        finally:
            await conn.close()

    async def count_finished() -> int:
        conn = await asyncpg.connect(dsn)
        try:
            return await conn.fetchval(
                "SELECT count(*) FROM attempts a JOIN runs r ON r.id = a.run_id "
                "WHERE r.label = 'filled' AND a.state = 'finished'"
            )
        except asyncpg.UndefinedTableError:
            return 0
        finally:
            await conn.close()

    tasks = dataset(tmp_path, 5)
    running = run_in_background(env, tasks, "--concurrency", "2")
    try:
        wait_for(lambda: asyncio.run(count_finished()) >= 1, 60, step=0.1)
        asyncio.run(query(f"ALTER DATABASE {name} SET default_transaction_read_only = on"))
        # Sessions keep the setting they started with: end them, the store reconnects read-only.
        asyncio.run(query(f"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{name}'"))
        _, stderr = running.communicate(timeout=60)
    finally:
        if running.poll() is None:
            running.kill()
    assert running.returncode == 1
    line = the_one_line(stderr)
    assert line.startswith(
        f"error: the store cannot write: the PostgreSQL database {name} on 127.0.0.1:5432 refuses writes "
        "(read-only: cannot execute "
    ), line
    assert "in a read-only transaction); stopped claiming, queued trials stay queued" in line
    progress = readable(env)["filled"]
    assert progress["trials"] == 5 and progress["queued"] >= 1
    assert os.path.isdir(tmp_path / "blobs")
