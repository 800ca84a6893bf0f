"""Nothing lost when anything dies: serve restarts, kill -9 of workers, store outages, bad tokens."""

import random
import shutil
import signal
import subprocess

import pytest

from tests.e2e.helpers import copy_task, hemra, peak_concurrency, show
from tests.e2e.queue_helpers import (
    assert_each_trial_once,
    finished,
    free_port,
    progress,
    start,
    stop,
    trials_of,
    wait_for,
)

pytestmark = pytest.mark.slow


@pytest.fixture
def queue_env(hemra_env):
    # A short lease so a killed worker's jobs come back within seconds.
    return dict(hemra_env, HEMRA_LEASE_SECS="3", HEMRA_TOKEN="queue-test-token")


def slow_dataset(tmp_path, count: int, seconds: float = 0.8) -> str:
    """`count` tasks whose solution takes a moment, so kills land mid-attempt."""
    folder = tmp_path / "slow"
    for index in range(count):
        task = copy_task("reverse-lines", folder, f"slow-{index:02d}")
        solve = task / "solution" / "solve.sh"
        solve.write_text(solve.read_text().replace("#!/bin/bash\n", f"#!/bin/bash\nsleep {seconds}\n", 1))
    return str(folder)


def detach(env, tmp_path, dataset: str, label: str, retries: int = 20, concurrency: int = 4) -> str:
    result = hemra(
        env,
        "run",
        "-H",
        "oracle",
        "-H",
        "nop",
        "-d",
        dataset,
        "--label",
        label,
        "--detach",
        "--max-infra-retries",
        str(retries),
        "--concurrency",
        str(concurrency),
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_serve__sigterm_and_kill_9_mid_run_then_restart_finishes_every_trial_once(queue_env, tmp_path):
    run = detach(queue_env, tmp_path, slow_dataset(tmp_path, 8, seconds=2.5), "restarts", retries=3)
    log = tmp_path / "serve.log"
    serve = start(queue_env, "serve", "--concurrency", "4", "--store-listen", "127.0.0.1:0", log=log)
    wait_for(lambda: progress(queue_env, run).get("done", 0) >= 2, 60)
    assert stop(serve, signal.SIGTERM) == 0  # hands running attempts back
    released = [a for ts in trials_of(queue_env, run).values() for a in ts if "released" in a.get("error", "")]
    serve = start(queue_env, "serve", "--concurrency", "4", "--store-listen", "127.0.0.1:0", log=log)
    wait_for(lambda: progress(queue_env, run).get("done", 0) >= 8, 60)
    stop(serve, signal.SIGKILL)  # no goodbye: leases must expire
    serve = start(queue_env, "serve", "--concurrency", "4", "--store-listen", "127.0.0.1:0", log=log)
    try:
        wait_for(lambda: finished(queue_env, run), 120)
    finally:
        stop(serve)
    grouped = assert_each_trial_once(queue_env, run, 16)
    assert released, "SIGTERM should have released the attempts it was running"
    assert show(queue_env, run)["report"]["complete"] is True
    assert sum(len(a) for a in grouped.values()) >= 16


def test_workers__kill_9_at_random_points_of_50_attempts(queue_env, tmp_path):
    rng = random.Random(20261202)
    dataset = slow_dataset(tmp_path, 25)
    run = detach(queue_env, tmp_path, dataset, "killed", retries=50, concurrency=3)
    port = free_port()
    log = tmp_path / "processes.log"
    # serve holds the store (and works one attempt at a time itself); only the workers are killed.
    serve = start(queue_env, "serve", "--concurrency", "1", "--store-listen", f"127.0.0.1:{port}", log=log)
    kills = 0
    try:
        wait_for(lambda: "working the queue" in log.read_text(), 30)
        for _ in range(40):
            if finished(queue_env, run):
                break
            worker = start(queue_env, "worker", "--store", f"127.0.0.1:{port}", "--concurrency", "2", log=log)
            try:
                worker.wait(timeout=rng.uniform(0.3, 2.0))
            except subprocess.TimeoutExpired:
                stop(worker, signal.SIGKILL)
                kills += 1
        final = start(queue_env, "worker", "--store", f"127.0.0.1:{port}", "--concurrency", "2", log=log)
        wait_for(lambda: finished(queue_env, run), 180)
        stop(final)
    finally:
        stop(serve)
    assert kills >= 5
    grouped = assert_each_trial_once(queue_env, run, 50)
    lost = [a for ts in grouped.values() for a in ts if "worker lost" in a.get("error", "")]
    assert lost, "some kills should have landed mid-attempt"


def test_worker__wrong_token_is_refused(queue_env, tmp_path):
    port = free_port()
    serve = start(queue_env, "serve", "--store-listen", f"127.0.0.1:{port}", log=tmp_path / "serve.log")
    try:
        wait_for(lambda: "working the queue" in (tmp_path / "serve.log").read_text(), 30)
        bad = dict(queue_env, HEMRA_TOKEN="not-the-token")
        result = hemra(bad, "worker", "--store", f"127.0.0.1:{port}", timeout=30)
        assert result.returncode == 2
        assert "refused the token in HEMRA_TOKEN" in result.stderr
        missing = {k: v for k, v in queue_env.items() if k != "HEMRA_TOKEN"}
        result = hemra(missing, "worker", "--store", f"127.0.0.1:{port}", timeout=30)
        assert result.returncode == 2 and "HEMRA_TOKEN is not set" in result.stderr
    finally:
        stop(serve)


def test_worker__survives_a_store_outage(queue_env, tmp_path):
    run = detach(queue_env, tmp_path, slow_dataset(tmp_path, 6), "outage", retries=5, concurrency=2)
    port = free_port()
    log = tmp_path / "p.log"
    # The serve process only serves the store here: its own executor gets no slot.
    serve = start(queue_env, "serve", "--concurrency", "1", "--store-listen", f"127.0.0.1:{port}", log=log)
    # A worker stops at once when its store cannot be reached: start it once the store listens.
    wait_for(lambda: "working the queue" in log.read_text(), 30)
    worker = start(queue_env, "worker", "--store", f"127.0.0.1:{port}", "--concurrency", "2", log=log)
    try:
        wait_for(lambda: progress(queue_env, run).get("done", 0) >= 2, 60)
        stop(serve, signal.SIGKILL)
        import time

        time.sleep(2)
        assert worker.poll() is None, "the worker must wait for the store, not exit"
        serve = start(queue_env, "serve", "--concurrency", "1", "--store-listen", f"127.0.0.1:{port}", log=log)
        wait_for(lambda: finished(queue_env, run), 120)
    finally:
        stop(worker)
        stop(serve)
    assert_each_trial_once(queue_env, run, 12)


def test_deleted_harness_folder__attempt_is_an_infra_failure_with_a_clear_message(queue_env, tmp_path):
    folder = tmp_path / "h"
    (folder / "harnesses").mkdir(parents=True)
    (folder / "harnesses" / "mine.toml").write_text('kind = "program"\ncommand = ["true"]\n')
    result = hemra(
        queue_env,
        "run",
        "-H",
        "mine",
        "-d",
        "hemra-offline",
        "-t",
        "hemra/text-stats",
        "--label",
        "orphan",
        "--detach",
        cwd=folder,
    )
    assert result.returncode == 0, result.stderr
    shutil.rmtree(folder)
    serve = start(queue_env, "serve", "--store-listen", "127.0.0.1:0", log=tmp_path / "serve.log")
    try:
        wait_for(lambda: finished(queue_env, "orphan"), 60)
    finally:
        stop(serve)
    [attempt] = show(queue_env, "orphan")["attempts"]
    assert attempt["outcome"] == "OUTCOME_INFRA_FAILED"
    assert "is gone" in attempt["error"] and str(folder) in attempt["error"]


def test_worker__tls(queue_env, tmp_path):
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=localhost",
            "-addext",
            "subjectAltName=IP:127.0.0.1,DNS:localhost",
            "-keyout",
            str(key),
            "-out",
            str(cert),
        ],
        check=True,
        capture_output=True,
    )
    run = detach(queue_env, tmp_path, "hemra-offline", "tls", retries=0, concurrency=2)
    port = free_port()
    log = tmp_path / "p.log"
    serve = start(
        queue_env,
        "serve",
        "--concurrency",
        "1",
        "--store-listen",
        f"127.0.0.1:{port}",
        "--tls-cert",
        str(cert),
        "--tls-key",
        str(key),
        log=log,
    )
    try:
        wait_for(lambda: "(TLS)" in log.read_text(), 30)
        plain = hemra(queue_env, "worker", "--store", f"127.0.0.1:{port}", timeout=60)
        assert plain.returncode != 0  # a plaintext client cannot talk to the TLS port
        worker = start(
            queue_env, "worker", "--store", f"127.0.0.1:{port}", "--tls-ca", str(cert), "--concurrency", "2", log=log
        )
        wait_for(lambda: finished(queue_env, run), 120)
        stop(worker)
    finally:
        stop(serve)
    assert_each_trial_once(queue_env, run, 22)


@pytest.mark.postgres
def test_workers__four_processes_race_on_postgres_over_1001_jobs(queue_env, tmp_path, postgres_url):
    import asyncio

    import asyncpg

    env = dict(queue_env, HEMRA_DATABASE_URL=postgres_url)
    run = detach(env, tmp_path, "hemra-offline", "race", retries=0, concurrency=8).strip()
    result = hemra(
        env,
        "run",
        "-H",
        "nop",
        "-d",
        "hemra-offline",
        "-k",
        "91",
        "--label",
        "race1001",
        "--concurrency",
        "8",
        "--detach",
    )
    assert result.returncode == 0, result.stderr
    port = free_port()
    log = tmp_path / "race.log"
    serve = start(env, "serve", "--concurrency", "0", "--store-listen", f"127.0.0.1:{port}", log=log)
    workers = []
    try:
        wait_for(lambda: "serving only" in log.read_text(), 30)
        workers = [
            start(env, "worker", "--store", f"127.0.0.1:{port}", "--concurrency", "2", log=log) for _ in range(4)
        ]
        wait_for(lambda: finished(env, "race1001") and finished(env, run), 600, step=2)
    finally:
        for worker in workers:
            stop(worker)
        stop(serve)

    async def check():
        conn = await asyncpg.connect(postgres_url)
        try:
            jobs = await conn.fetch("SELECT state, try_count, lease_token, lease_owner FROM jobs")
            attempts = await conn.fetchval("SELECT count(*) FROM attempts WHERE state = 'finished'")
            return jobs, attempts
        finally:
            await conn.close()

    jobs, attempts = asyncio.run(check())
    assert len(jobs) == 1001 + 22 == attempts
    assert {(j["state"], j["try_count"], j["lease_token"]) for j in jobs} == {("done", 1, 1)}
    owners = {j["lease_owner"] for j in jobs}
    assert len(owners) == 4, owners  # every worker took part
    assert_each_trial_once(env, "race", 22)


def test_run_concurrency__holds_across_workers(queue_env, tmp_path):
    (tmp_path / "harnesses").mkdir()
    spans = tmp_path / "spans.log"
    (tmp_path / "harnesses" / "span.toml").write_text('kind = "program"\ncommand = ["bash", "span.sh"]\n')
    (tmp_path / "harnesses" / "span.sh").write_text(
        f'echo "start $(date +%s.%N)" >> {spans}; sleep 0.5; echo "end $(date +%s.%N)" >> {spans}\n'
    )
    result = hemra(
        queue_env,
        "run",
        "-H",
        "span",
        "-d",
        "hemra-offline",
        "--concurrency",
        "2",
        "--label",
        "capped",
        "--detach",
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    port = free_port()
    log = tmp_path / "p.log"
    serve = start(queue_env, "serve", "--concurrency", "3", "--store-listen", f"127.0.0.1:{port}", log=log)
    workers = []
    try:
        wait_for(lambda: "working the queue" in log.read_text(), 30)
        workers = [
            start(queue_env, "worker", "--store", f"127.0.0.1:{port}", "--concurrency", "3", log=log) for _ in range(2)
        ]
        wait_for(lambda: finished(queue_env, "capped"), 120)
    finally:
        for worker in workers:
            stop(worker)
        stop(serve)
    assert peak_concurrency(spans) == 2
