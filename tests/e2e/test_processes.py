"""Each service as its own process, talking over gRPC on loopback; only the store opens the database."""

import asyncio
import subprocess
import sys

import pytest

from hemra.services.common import errors, transport
from hemra.v1 import common_pb2 as pb
from hemra.v1 import planner_service_pb2 as ppb
from hemra.v1 import store_service_pb2 as spb
from tests.conftest import HEMRA, REPO

pytestmark = pytest.mark.slow


def start(name: str, env: dict, *args: str) -> tuple[subprocess.Popen, str]:
    process = subprocess.Popen(
        [sys.executable, "-m", f"hemra.services.{name}", "--listen", "127.0.0.1:0", *args],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    line = process.stdout.readline()
    assert f"{name} listening on 127.0.0.1:" in line, line
    return process, line.rsplit(" ", 1)[1].strip()


def test_services__as_separate_processes(hemra_env, tmp_path):
    hemra_env = dict(hemra_env, HEMRA_TOKEN="process-test-token")
    store_env = dict(hemra_env, HEMRA_HOME=str(tmp_path / "store-home"))
    # The other services get a home without a database: they could not open one if they tried.
    other_env = dict(
        hemra_env,
        HEMRA_HOME=str(tmp_path / "worker-home"),
        HEMRA_DATABASE_URL="postgresql://nobody@127.0.0.1:1/none",
        DOCKER_HOST=f"unix://{tmp_path / 'no-engine.sock'}",  # nor a Docker engine
    )
    processes = []
    try:
        # A deployment migrates once, by hand; the store service never does.
        subprocess.run([HEMRA, "db", "upgrade"], env=store_env, check=True, capture_output=True, timeout=120)
        store, store_addr = start("store", store_env)
        processes.append(store)
        # Executors build task images (as on Kubernetes, where the planner has no engine).
        planner, planner_addr = start("planner", other_env, "--store", store_addr, "--no-build-images")
        scorer, scorer_addr = start("scorer", other_env, "--store", store_addr)
        processes += [planner, scorer]
        executor, _ = start(
            "executor",
            other_env,
            "--store",
            store_addr,
            "--scorer",
            scorer_addr,
            "--concurrency",
            "2",
            "--pool",
            "procs",
        )
        processes.append(executor)
        report = asyncio.run(_plan_and_wait(planner_addr, store_addr, "process-test-token"))
        other_pool = asyncio.run(_plan_docker_run_of_another_pool(planner_addr, store_addr, "process-test-token"))
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            process.wait(timeout=15)
    rows = {r.harness_name: r for r in report.datasets[0].rows}
    assert rows["oracle"].passed == rows["oracle"].binary_graded == 2
    assert rows["nop"].passed == 0 and rows["nop"].binary_graded == 2
    assert report.complete
    # Planned without an engine, and left alone by the executor of another pool.
    assert other_pool.spec.pool == "gpu" and other_pool.spec.sandbox == "docker"
    assert other_pool.progress.done == 0 and other_pool.progress.running == 0
    assert not (tmp_path / "worker-home" / "hemra.db").exists()
    assert (tmp_path / "store-home" / "hemra.db").exists()
    assert [p.returncode for p in processes] == [0] * len(processes)


async def _plan_and_wait(planner_addr: str, store_addr: str, token: str):
    planner_channel, store_channel = transport.channel(planner_addr), transport.channel(store_addr)
    try:
        spec = pb.RunSpec(
            label="procs",
            harnesses=["oracle", "nop"],
            datasets=["hemra-offline"],
            tasks=["hemra/text-stats", "hemra/reverse-lines"],
            concurrency=2,
            pool="procs",
        )
        run = (await transport.planner(planner_channel, token).PlanRun(ppb.PlanRunRequest(spec=spec))).run
        store = transport.store(store_channel, token)
        with pytest.raises(errors.Unauthenticated):
            await transport.store(store_channel, "wrong").GetRun(spb.GetRunRequest(run=run.id))
        for _ in range(300):
            progress = (await store.GetRun(spb.GetRunRequest(run=run.id))).run.progress
            if progress.done == progress.trials == 4:
                break
            await asyncio.sleep(0.1)
        return (await store.GetRunReport(spb.GetRunReportRequest(run=run.id))).report
    finally:
        await planner_channel.close()
        await store_channel.close()


async def _plan_docker_run_of_another_pool(planner_addr: str, store_addr: str, token: str) -> pb.Run:
    planner_channel, store_channel = transport.channel(planner_addr), transport.channel(store_addr)
    try:
        spec = pb.RunSpec(
            harnesses=["nop"], datasets=["hemra-offline"], tasks=["hemra/text-stats"], sandbox="docker", pool="gpu"
        )
        run = (await transport.planner(planner_channel, token).PlanRun(ppb.PlanRunRequest(spec=spec))).run
        await asyncio.sleep(1.5)  # the executor polls the queue several times meanwhile
        store = transport.store(store_channel, token)
        found = (await store.GetRun(spb.GetRunRequest(run=run.id))).run
        await store.CancelRun(spb.CancelRunRequest(run=run.id))
        return found
    finally:
        await planner_channel.close()
        await store_channel.close()


def test_executor_service__sigterm_hands_running_attempts_back(hemra_env, tmp_path):
    """A scaled-down executor (Kubernetes, compose) gets SIGTERM: its running attempts go back
    to the queue before it exits, not when their leases expire."""
    env = dict(hemra_env, HEMRA_TOKEN="drain-test-token", HEMRA_HOME=str(tmp_path / "home"))
    subprocess.run([HEMRA, "db", "upgrade"], env=env, check=True, capture_output=True, timeout=120)
    harness = tmp_path / "harnesses" / "sleeper.toml"
    harness.parent.mkdir()
    harness.write_text('kind = "program"\nagent = "sleeper"\nversion = "1"\ncommand = ["sleep", "600"]\n')
    processes = []
    try:
        store, store_addr = start("store", env)
        planner, planner_addr = start("planner", env, "--store", store_addr)
        scorer, scorer_addr = start("scorer", env, "--store", store_addr)
        processes += [store, planner, scorer]
        executor, _ = start("executor", env, "--store", store_addr, "--scorer", scorer_addr, "--concurrency", "2")
        attempts, exit_code = asyncio.run(_drain(executor, planner_addr, store_addr, str(harness)))
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            process.wait(timeout=15)
    assert exit_code == 0
    released = [a for a in attempts if a.error == "released: worker stopped"]
    assert len(released) == 2 and all(a.outcome == pb.OUTCOME_INFRA_FAILED for a in released)
    # Each is queued again at once, as a new attempt that does not use up max_infra_retries.
    assert sorted(a.number for a in attempts if a.state == pb.ATTEMPT_STATE_QUEUED) == [2, 2]


async def _drain(executor: subprocess.Popen, planner_addr: str, store_addr: str, harness: str):
    token = "drain-test-token"
    planner_channel, store_channel = transport.channel(planner_addr), transport.channel(store_addr)
    try:
        spec = pb.RunSpec(
            harnesses=[harness], datasets=["hemra-offline"], tasks=["hemra/text-stats", "hemra/reverse-lines"]
        )
        spec.concurrency = 2
        run = (await transport.planner(planner_channel, token).PlanRun(ppb.PlanRunRequest(spec=spec))).run
        store = transport.store(store_channel, token)
        for _ in range(300):
            if (await store.GetRun(spb.GetRunRequest(run=run.id))).run.progress.running == 2:
                break
            await asyncio.sleep(0.1)
        await asyncio.sleep(1.0)  # the harnesses are running
        executor.terminate()
        exit_code = await asyncio.to_thread(executor.wait, 30)
        # Asked only now: everything below was done before the process exited.
        attempts = (await store.ListAttempts(spb.ListAttemptsRequest(parent=f"runs/{run.id}"))).attempts
        await store.CancelRun(spb.CancelRunRequest(run=run.id))
        return list(attempts), exit_code
    finally:
        await planner_channel.close()
        await store_channel.close()
