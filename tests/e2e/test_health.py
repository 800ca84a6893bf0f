"""Health, readiness and migrations of services run alone (real processes, gRPC on loopback):
each says NOT_SERVING until it can do its job and SERVING after; the store never migrates on
its own and `hemra db wait` returns only at head."""

import asyncio
import subprocess
import time

import grpc
import pytest
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from hemra.services.common import errors, health, transport
from hemra.v1 import store_service_pb2 as spb
from tests.conftest import HEMRA
from tests.e2e.test_processes import start

pytestmark = pytest.mark.slow
TOKEN = "health-test-token"


def status(address: str, service: str = "") -> str:
    return asyncio.run(health.check(address, service))


def wait_for(address: str, wanted: str, service: str = "", timeout: float = 20.0) -> str:
    deadline = time.monotonic() + timeout
    while (seen := status(address, service)) != wanted and time.monotonic() < deadline:
        time.sleep(0.2)
    return seen


def db(env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([HEMRA, "db", *args], env=env, capture_output=True, text=True, timeout=120)


def stop(*processes: subprocess.Popen) -> list[int]:
    for process in processes:
        process.terminate()
    return [process.wait(timeout=15) for process in processes]


def test_store__not_serving_until_migrated_by_hand(hemra_env, tmp_path):
    env = dict(hemra_env, HEMRA_TOKEN=TOKEN, HEMRA_HOME=str(tmp_path / "home"))
    store, address = start("store", env)
    try:
        assert status(address) == "NOT_SERVING"
        assert status(address, health.LIVENESS) == "SERVING"
        assert status(address, "hemra.v1.StoreService") == "NOT_SERVING"
        # Its calls are refused with the reason, not run against a missing schema.
        with pytest.raises(errors.Unavailable, match="not ready: the database has no HEMRA schema"):
            asyncio.run(_list_runs(address))
        waited = db(env, "wait", "--timeout", "1")
        assert waited.returncode == 1 and "is not at head after 1 s" in waited.stderr
        # Pods without the database's credentials ask the store (deploy/helm's init containers).
        # No database URL reaches this one: it cannot be answering from the database.
        no_db = {k: v for k, v in env.items() if k != "HEMRA_DATABASE_URL"} | {"HEMRA_HOME": str(tmp_path / "x")}
        waited = db(no_db, "wait", "--store", address, "--timeout", "1")
        assert waited.returncode == 1, waited.stderr
        assert f"the store at {address} is not serving after 1 s: NOT_SERVING" in waited.stderr
        time.sleep(1.5)
        assert status(address) == "NOT_SERVING"  # still: nothing migrated it

        upgraded = db(env, "upgrade")
        assert upgraded.returncode == 0, upgraded.stderr
        assert upgraded.stdout.startswith("schema at head (")
        assert wait_for(address, "SERVING") == "SERVING"
        assert status(address, "hemra.v1.StoreService") == "SERVING"
        assert asyncio.run(_list_runs(address)) == []
        assert db(env, "wait", "--timeout", "5").returncode == 0
        waited = db(no_db, "wait", "--store", address, "--timeout", "5")
        assert waited.returncode == 0 and "serves: schema at head" in waited.stdout, waited.stderr
    finally:
        assert stop(store) == [0]


def test_db_wait__returns_once_another_process_migrates(hemra_env, tmp_path):
    env = dict(hemra_env, HEMRA_HOME=str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    waiting = subprocess.Popen([HEMRA, "db", "wait", "--timeout", "60"], env=env, stdout=subprocess.PIPE, text=True)
    time.sleep(2)
    assert waiting.poll() is None  # still waiting: nothing is at head yet
    assert db(env, "upgrade").returncode == 0
    assert waiting.wait(timeout=30) == 0
    assert "schema at head" in waiting.stdout.read()


def test_db_upgrade__unreachable_database_is_one_line(hemra_env):
    result = db(dict(hemra_env, HEMRA_DATABASE_URL="postgresql://nobody@127.0.0.1:1/none"), "upgrade")
    assert result.returncode == 1
    assert result.stderr.strip().startswith("error: cannot reach the database:")
    assert "Traceback" not in result.stderr


def test_executor__serving_only_once_its_sandbox_backend_answers(hemra_env, tmp_path):
    env = dict(hemra_env, HEMRA_TOKEN=TOKEN, HEMRA_HOME=str(tmp_path / "home"))
    assert db(env, "upgrade").returncode == 0
    store, store_addr = start("store", env)
    scorer, scorer_addr = start("scorer", env, "--store", store_addr)
    # An engine socket nothing listens on: the executor starts, says why it is not ready.
    no_engine = dict(env, DOCKER_HOST=f"unix://{tmp_path / 'no-docker.sock'}")
    docker_less, docker_addr = start(
        "executor", no_engine, "--store", store_addr, "--scorer", scorer_addr, "--sandbox", "docker"
    )
    host, host_addr = start("executor", env, "--store", store_addr, "--scorer", scorer_addr, "--sandbox", "host")
    try:
        assert wait_for(store_addr, "SERVING") == "SERVING"
        assert wait_for(scorer_addr, "SERVING") == "SERVING"
        assert wait_for(host_addr, "SERVING", "hemra.v1.ExecutorService") == "SERVING"
        time.sleep(1.5)
        assert status(docker_addr) == "NOT_SERVING"
        assert status(docker_addr, "hemra.v1.ExecutorService") == "NOT_SERVING"
        # Alive all the same: a liveness probe must not restart it for waiting on its engine.
        assert status(docker_addr, health.LIVENESS) == "SERVING"
        # Reflection lists what each server serves, without a token (probes and grpcurl).
        assert "hemra.v1.ExecutorService" in asyncio.run(_reflected(host_addr))
        assert "hemra.v1.StoreService" in asyncio.run(_reflected(store_addr))
    finally:
        codes = stop(docker_less, host, scorer, store)
    assert codes == [0, 0, 0, 0]


async def _list_runs(address: str) -> list:
    channel = transport.channel(address)
    try:
        store = transport.store(channel, TOKEN)
        return list((await store.ListRuns(spb.ListRunsRequest(), timeout=5)).runs)
    finally:
        await channel.close()


async def _reflected(address: str) -> set[str]:
    async with grpc.aio.insecure_channel(address) as channel:
        stub = reflection_pb2_grpc.ServerReflectionStub(channel)
        request = reflection_pb2.ServerReflectionRequest(list_services="")
        async for response in stub.ServerReflectionInfo(iter([request])):
            return {s.name for s in response.list_services_response.service}
    return set()
