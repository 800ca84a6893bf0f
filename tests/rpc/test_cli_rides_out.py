"""`hemra run` against a deployment (HEMRA_SERVER) while the deployment's store is away: a real
store server stopped in the middle of the run and started again on the same port, behind a real
gateway front door, with a real executor working the run. The CLI waits for it (one line when it
starts waiting, one when it goes on) and the run completes once; away longer than the CLI's
window (HEMRA_CLIENT_RIDE_OUT), the command ends in one line and a non-zero exit, no traceback.
A repeated PlanRun with the same request ID answers the run the first recorded."""

import asyncio
import contextlib
import time
from pathlib import Path

import pytest

from hemra.gateway.frontdoor import build_front_door
from hemra.services.common import auth, errors, transport
from hemra.services.compose import embedded
from hemra.services.planner.server import build_server as build_planner
from hemra.services.scorer.server import build_server as build_scorer
from hemra.services.store.server import build_server as build_store
from hemra.services.store.service import Store
from hemra.v1 import common_pb2 as pb
from hemra.v1 import planner_service_pb2 as ppb
from hemra.v1 import store_service_pb2 as spb
from tests.conftest import HEMRA, clean_env
from tests.rpc.frontdoor import deployment

TOKEN = "ride-out-test-token"
#: How long the store is away in the middle of the run: longer than the five quick retries
#: (about 3 s) that were all a remote command had.
AWAY_SECS = 6.0
#: The harness's one trial: long enough that the store goes away while it runs.
TRIAL_SECS = 2


class StoreServer:
    """The store's server, which a test stops and starts again on the same port (the Store, its
    database, stays open: a restart of the store's process, as the front door sees it)."""

    def __init__(self, store: Store, credentials: auth.Credentials):
        self.store, self.credentials = store, credentials
        self.server, self.port = None, 0

    async def start(self) -> None:
        self.server, self.port = build_store(self.store, f"127.0.0.1:{self.port}", self.credentials)
        await transport.start(self.server)

    async def stop(self) -> None:
        await transport.stop(self.server, grace=None)

    async def away(self, secs: float) -> None:
        await self.stop()
        await asyncio.sleep(secs)
        await self.start()


@contextlib.asynccontextmanager
async def _deployment(home: Path):
    """Store, planner, scorer and an executor, each behind its own server on 127.0.0.1, and the
    gateway's front door to them; yields the store's server and the front door's URL."""
    credentials = auth.Credentials.single(TOKEN)
    store = await Store.open(f"sqlite:///{home / 'hemra.db'}", home / "blobs")
    store_server = StoreServer(store, credentials)
    await store_server.start()
    services = embedded.Embedded(home, credentials, {"store": f"127.0.0.1:{store_server.port}"})
    # As the services' own processes do (python -m hemra.services.executor, .scorer): they ride out the store.
    services.store = transport.store(services.channel("store"), TOKEN, ride_out=transport.STORE_RIDE_OUT)
    scorer_servicer, worker, work, door = None, None, None, None
    try:
        await services.start("planner", *build_planner(services.store, home, embedded.LOOPBACK, credentials, False))
        server, port, scorer_servicer = build_scorer(services.store, embedded.LOOPBACK, credentials)
        await services.start("scorer", server, port)
        services.scorer = transport.scorer(services.channel("scorer"), TOKEN)
        worker = await services.start_executor(2)
        work = asyncio.create_task(worker.run())
        upstreams = {name: services.channel(name) for name in ("store", "planner", "scorer")}
        door, door_port = build_front_door(upstreams, credentials, "127.0.0.1:0")
        await transport.start(door)
        yield store_server, services.store, f"http://127.0.0.1:{door_port}"
    finally:
        if worker is not None:
            await worker.stop()
            await asyncio.gather(work, return_exceptions=True)
        if door is not None:
            await transport.stop(door, grace=None)
        await services.stop()
        if scorer_servicer is not None:
            await scorer_servicer.close()
        await store_server.stop()
        await store.close()


def _slow_harness(folder: Path) -> Path:
    """A program harness that only waits: its one trial fails, after TRIAL_SECS."""
    (folder / "harnesses").mkdir(parents=True)
    path = folder / "harnesses" / "slow.toml"
    path.write_text(f'kind = "program"\ncommand = ["sleep", "{TRIAL_SECS}"]\n')
    return path


async def _hemra_run(url: str, tmp_path: Path, ride_out: float) -> asyncio.subprocess.Process:
    env = clean_env()
    env.update(
        HEMRA_HOME=str(tmp_path / "laptop"),
        HEMRA_SERVER=url,
        HEMRA_TOKEN=TOKEN,
        HEMRA_CLIENT_RIDE_OUT=str(ride_out),
    )
    args = ["run", "-H", str(_slow_harness(tmp_path)), "-d", "hemra-offline", "-t", "reverse-lines"]
    return await asyncio.create_subprocess_exec(
        HEMRA, *args, env=env, cwd=tmp_path, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )


async def _running(store: transport.Client) -> pb.Run:
    """The one run, once its trial is running."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        runs = (await store.ListRuns(spb.ListRunsRequest())).runs
        if runs and runs[0].progress.running:
            return runs[0]
        await asyncio.sleep(0.05)
    raise AssertionError("the run never started")


def _lines(stderr: bytes, text: str) -> list[str]:
    return [line for line in stderr.decode().splitlines() if text in line]


async def test_hemra_run_rides_out_the_store_going_away_mid_run_and_the_run_completes_once(tmp_path):
    async with _deployment(tmp_path / "deployment") as (store_server, store, url):
        cli = await _hemra_run(url, tmp_path, ride_out=30)
        run = await _running(store)
        await store_server.away(AWAY_SECS)
        out, err = await asyncio.wait_for(cli.communicate(), timeout=60)
        attempts = (await store.ListAttempts(spb.ListAttemptsRequest(parent=run.id))).attempts
        assert cli.returncode == 0, (err.decode()[-3000:], [(a.outcome, a.error) for a in attempts])
        assert "Traceback" not in err.decode()
        waiting = _lines(err, "waiting for the store")
        assert len(waiting) == 1 and waiting[0].endswith("up to 30 s"), err.decode()
        assert len(_lines(err, "the store answers again after")) == 1, err.decode()
        assert f"run {run.id}" in out.decode() and "slow" in out.decode()
        runs = (await store.ListRuns(spb.ListRunsRequest())).runs
        assert [r.id for r in runs] == [run.id]  # one run, recorded once
        assert runs[0].progress.trials == runs[0].progress.done == 1


async def test_a_store_away_longer_than_the_window_ends_the_command_in_one_line(tmp_path):
    async with _deployment(tmp_path / "deployment") as (store_server, store, url):
        cli = await _hemra_run(url, tmp_path, ride_out=2)
        await _running(store)
        await store_server.stop()
        try:
            out, err = await asyncio.wait_for(cli.communicate(), timeout=30)
        finally:
            await store_server.start()  # the deployment's executor finishes; the fixture stops it
        assert cli.returncode == 1, err.decode()[-3000:]
        assert "Traceback" not in err.decode() and "never retrieved" not in err.decode(), err.decode()
        assert len(_lines(err, "waiting for the store")) == 1, err.decode()
        (refusal,) = [line for line in err.decode().splitlines() if line.startswith("error:")]
        assert refusal.startswith("error: unavailable: the store was unavailable for 2 s, giving up: "), refusal
        assert "Connection refused" in refusal  # the store's address, as the front door met it
        assert refusal.startswith("error: unavailable: the store was unavailable for 2 s, giving up: "), refusal


def _spec() -> pb.RunSpec:
    return pb.RunSpec(harnesses=["oracle"], datasets=["hemra-offline"], tasks=["reverse-lines"])


async def test_a_repeated_plan_run_with_the_same_request_id_answers_the_first_run(tmp_path):
    async with deployment(tmp_path) as door:
        spec = _spec()
        request = ppb.PlanRunRequest(spec=spec, request_id="7f7c1b0e9a3d4c56b1e2d3f4a5b6c7d8")
        first = (await door.planner.PlanRun(request)).run
        again = (await door.planner.PlanRun(request)).run
        assert again.id == first.id and list(again.cells) == list(first.cells)
        other = (await door.planner.PlanRun(ppb.PlanRunRequest(spec=spec, request_id="another"))).run
        unkeyed = (await door.planner.PlanRun(ppb.PlanRunRequest(spec=spec))).run
        assert len({first.id, other.id, unkeyed.id}) == 3
        runs = (await door.store.ListRuns(spb.ListRunsRequest())).runs
        assert sorted(r.id for r in runs) == sorted([first.id, other.id, unkeyed.id])
        listed = (await door.store.ListAttempts(spb.ListAttemptsRequest(parent=first.id))).attempts
        assert len(listed) == 1  # the repeat queued no second attempt


async def test_the_same_request_id_recorded_at_once_twice_is_one_run(tmp_path):
    async with deployment(tmp_path) as door:
        spec = _spec()
        request = ppb.PlanRunRequest(spec=spec, request_id="at-once")
        answers = await asyncio.gather(*(door.planner.PlanRun(request) for _ in range(4)))
        assert len({a.run.id for a in answers}) == 1
        assert len((await door.store.ListRuns(spb.ListRunsRequest())).runs) == 1


async def test_a_request_id_longer_than_the_store_keeps_is_refused(tmp_path):
    async with deployment(tmp_path) as door:
        spec = _spec()
        with pytest.raises(errors.InvalidArgument, match="RecordRun: request_id must be at most 64 printable"):
            await door.planner.PlanRun(ppb.PlanRunRequest(spec=spec, request_id="x" * 65))


def test_plan_run_is_repeated_after_an_outage_only_with_a_request_id():
    assert transport.retried("PlanRun", ppb.PlanRunRequest(request_id="r"))
    assert not transport.retried("PlanRun", ppb.PlanRunRequest())
    assert not transport.retried("ClaimJob", spb.ClaimJobRequest())
