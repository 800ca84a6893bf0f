"""A deployment for the fuzz suite: the store, planner, importer and scorer, each a real gRPC
server on 127.0.0.1 port 0, with the gateway's front door and HTTP app in front, all on an
event loop of their own in a thread. The tests call it as a remote user would, with blocking
gRPC and HTTP clients, so a call that hangs ends at its deadline instead of hanging the test.

The planner builds no images (as a planner without a Docker engine, --no-build-images), no
Docker engine answers, and nothing but loopback is reachable: a fuzzed dataset name that
names the Harbor registry or Hugging Face fails fast instead of going out."""

import asyncio
import shutil
import threading
from pathlib import Path

import grpc
import httpx
import pytest

from hemra.services.common import auth, transport
from hemra.v1 import store_service_pb2 as spb

TOKEN = "fuzz-deployment-token"
LOOPBACK = "127.0.0.1:0"
#: Nothing listens on the discard port: a connection there is refused at once.
DEAD = "http://127.0.0.1:9"
#: What keeps a fuzzed request on this machine and away from any engine.
ISOLATED_ENV = {
    "HEMRA_HARBOR_REGISTRY": f"{DEAD}/registry.json",
    "HF_HUB_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "HF_ENDPOINT": DEAD,
    "HTTP_PROXY": DEAD,
    "HTTPS_PROXY": DEAD,
    "ALL_PROXY": DEAD,
    "http_proxy": DEAD,
    "https_proxy": DEAD,
    "NO_PROXY": "127.0.0.1,localhost,::1",
    "no_proxy": "127.0.0.1,localhost,::1",
    "DOCKER_HOST": "unix:///nonexistent/docker.sock",
    "FUZZ_JUDGE_KEY": "fuzz-key",
}


class Deployment:
    """Start with `start()`; `door` (HOST:PORT of the front door), `http` (the HTTP API's base URL)."""

    def __init__(self, home: Path):
        self.home = home
        self.door = self.http = ""
        #: HOST:PORT of each service by name ("store", "planner", "importer", "scorer").
        self.addresses: dict[str, str] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._ready = threading.Event()
        self._failed: BaseException | None = None
        self._thread = threading.Thread(target=self._run, daemon=True, name="fuzz-deployment")

    def start(self) -> "Deployment":
        self._thread.start()
        if not self._ready.wait(60):
            raise RuntimeError("the fuzz deployment did not start in 60 s")
        if self._failed:
            raise self._failed
        return self

    def stop(self) -> None:
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(30)

    def _run(self) -> None:
        try:
            asyncio.run(self._main())
        except BaseException as exc:  # reported to start(), which raises it
            self._failed = exc
            self._ready.set()

    async def _main(self) -> None:
        from hemra.gateway.app import create_app
        from hemra.gateway.frontdoor import build_front_door
        from hemra.gateway.server import start_http, stop_http, url_of
        from hemra.services.importer.server import build_server as build_importer
        from hemra.services.planner.server import build_server as build_planner
        from hemra.services.scorer.server import build_server as build_scorer
        from hemra.services.store.server import build_server as build_store
        from hemra.services.store.service import Store

        self._loop, self._stop = asyncio.get_running_loop(), asyncio.Event()
        store = await Store.open(f"sqlite:///{self.home / 'hemra.db'}", self.home / "blobs")
        servers, channels = [], {}

        async def serve(name, server, port):
            await transport.start(server)
            servers.append(server)
            self.addresses[name] = f"127.0.0.1:{port}"
            channels[name] = transport.channel(self.addresses[name])
            return channels[name]

        scorer_servicer = None
        web = None
        try:
            store_client = transport.store(await serve("store", *build_store(store, LOOPBACK, TOKEN)), TOKEN)
            planner = build_planner(store_client, self.home, LOOPBACK, TOKEN, build_images=False)
            planner_client = transport.planner(await serve("planner", *planner), TOKEN)
            await serve("importer", *build_importer(store_client, planner_client, LOOPBACK, TOKEN))
            server, port, scorer_servicer = build_scorer(store_client, LOOPBACK, TOKEN)
            await serve("scorer", server, port)
            # Server paths allowed: the widest front door a deployment can open, so the fuzzed
            # paths reach the planner and importer (tests/rpc/test_who_may_call.py: the default).
            door, door_port = build_front_door(dict(channels), TOKEN, LOOPBACK, allow_server_paths=True)
            await transport.start(door)
            servers.append(door)
            web = await start_http(create_app(store_client), LOOPBACK)
            self.door = f"127.0.0.1:{door_port}"
            self.http = url_of(web).rstrip("/")
            self._ready.set()
            await self._stop.wait()
        finally:
            if web is not None:
                await stop_http(web)
            for server in reversed(servers):
                await server.stop(grace=None)
            for channel in channels.values():
                await channel.close()
            if scorer_servicer is not None:
                await scorer_servicer.close()
            await store.close()


def home_copy(source: Path, into: Path) -> Path:
    """A private copy of a HEMRA_HOME (its database and blobs): a fuzz run writes to it."""
    home = into / "home"
    shutil.copytree(source, home, ignore=shutil.ignore_patterns("work", "cache"))
    return home


@pytest.fixture(scope="module")
def deployment(fuzz_home, tmp_path_factory):
    """The deployment over a copy of fuzz_home; its judges' model is the scripted one on loopback
    (FUZZ_JUDGE_URL), which grades every criterion."""
    from tests.modelserver import ModelServer, parse

    with pytest.MonkeyPatch.context() as patch, ModelServer(parse({"judge": [{"judge": "rubric"}]})) as model:
        for name, value in {**ISOLATED_ENV, "FUZZ_JUDGE_URL": model.url + "/v1"}.items():
            patch.setenv(name, value)
        running = Deployment(home_copy(fuzz_home, tmp_path_factory.mktemp("deployment"))).start()
        try:
            yield running
        finally:
            running.stop()


# --- a remote caller ----------------------------------------------------------------------
def call(channel: grpc.Channel, method: str, request: bytes, timeout: float = 30) -> tuple[grpc.StatusCode, str, bytes]:
    """(code, details, response bytes) of one call of `method` with `request` as its bytes."""
    callable_ = channel.unary_unary(method)
    try:
        response = callable_(request, timeout=timeout, metadata=auth.metadata(TOKEN))
        return grpc.StatusCode.OK, "", response
    except grpc.RpcError as exc:
        return exc.code(), exc.details() or "", b""


def stub_call(channel: grpc.Channel, method: str, request, response_class, timeout: float = 30):
    code, details, data = call(channel, method, request.SerializeToString(), timeout)
    assert code == grpc.StatusCode.OK, (method, code, details)
    return response_class.FromString(data)


def still_reads(channel: grpc.Channel, http: str) -> None:
    """Every run lists, opens and reports; the HTTP API says it is ready."""
    token, runs = "", []
    while True:
        page = stub_call(
            channel,
            "/hemra.v1.StoreService/ListRuns",
            spb.ListRunsRequest(page_size=100, page_token=token),
            spb.ListRunsResponse,
        )
        runs += page.runs
        token = page.next_page_token
        if not token:
            break
    assert runs
    for run in runs:
        stub_call(channel, "/hemra.v1.StoreService/GetRun", spb.GetRunRequest(run=run.id), spb.GetRunResponse)
        stub_call(
            channel,
            "/hemra.v1.StoreService/GetRunReport",
            spb.GetRunReportRequest(run=run.id),
            spb.GetRunReportResponse,
        )
    with httpx.Client(base_url=http, timeout=30) as client:
        for path in ("/api/ready", "/api/runs"):
            response = client.get(path)
            assert response.status_code == 200, (path, response.text)
