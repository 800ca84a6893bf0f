"""Each service as its own process, talking over gRPC on loopback; only the store opens the database."""

import asyncio
import subprocess
import sys

import pytest

from hemra.v1 import common_pb2 as pb
from hemra.v1 import planner_service_pb2 as ppb
from hemra.v1 import store_service_pb2 as spb
from services.common import errors, transport
from tests.conftest import HEMRA, REPO

pytestmark = pytest.mark.slow


def start(name: str, env: dict, *args: str) -> tuple[subprocess.Popen, str]:
    process = subprocess.Popen(
        [sys.executable, "-m", f"services.{name}", "--listen", "127.0.0.1:0", *args],
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
