"""A servicer called in process (services/common/inprocess.py) keeps the contract of a call over
gRPC: the same role check, the same error class and line for whatever the servicer raises, the
same deadline. Each case is asked both ways, of a real server and of the same servicer here."""

import asyncio
import contextlib

import pytest

from hemra.services.common import auth, errors, inprocess, transport
from hemra.services.domain.planerrors import PlanError
from hemra.services.store import db
from hemra.services.store.server import build_server
from hemra.services.store.service import Store
from hemra.services.store.servicer import StoreServicer
from hemra.v1 import store_service_pb2 as spb
from hemra.v1 import store_service_pb2_grpc as spb_grpc

TOKEN = "user-token"


@contextlib.asynccontextmanager
async def _store(tmp_path):
    store = await Store.open(f"sqlite:///{tmp_path / 'hemra.db'}", tmp_path / "blobs")
    try:
        yield store
    finally:
        await store.close()


@contextlib.asynccontextmanager
async def _over_grpc(server, retries: int = 1):
    """`server` (built, not started) and a store client of the user's, over loopback gRPC."""
    server, port = server
    await transport.start(server)
    channel = transport.channel(f"127.0.0.1:{port}")
    try:
        yield transport.store(channel, TOKEN, retries=retries)
    finally:
        await channel.close()
        await transport.stop(server, grace=0)


async def _raised(call) -> errors.HemraError:
    with pytest.raises(errors.HemraError) as caught:
        await call
    return caught.value


async def test_the_gateways_role_is_refused_what_it_may_not_call_as_over_the_wire(tmp_path):
    credentials = auth.Credentials.of_role(auth.USER, [TOKEN])
    async with _store(tmp_path) as store, _over_grpc(build_server(store, "127.0.0.1:0", credentials)) as wire:
        local = inprocess.store(StoreServicer(store), auth.SENDS["gateway"], translate=db.as_outage)
        for rpc, request in [
            ("ClaimJob", spb.ClaimJobRequest(worker="w")),
            ("RecordRun", spb.RecordRunRequest()),
            ("ReleaseJob", spb.ReleaseJobRequest(job="j")),
        ]:
            remote, here = await _raised(getattr(wire, rpc)(request)), await _raised(getattr(local, rpc)(request))
            assert type(here) is type(remote) is errors.PermissionDenied, rpc
            assert str(here) == str(remote) and f"{rpc} is for" in str(here)
        # what the role may call, it calls: the same answer both ways
        request = spb.ListRunsRequest(page_size=5)
        assert await local.ListRuns(request) == await wire.ListRuns(request)


async def test_the_stores_own_errors_arrive_as_the_same_class_and_line(tmp_path):
    async with _store(tmp_path) as store, _over_grpc(build_server(store, "127.0.0.1:0", TOKEN)) as wire:
        local = inprocess.store(StoreServicer(store), auth.USER, translate=db.as_outage)
        for rpc, request in [
            ("GetRun", spb.GetRunRequest(run="no-such-run")),
            ("GetRunReport", spb.GetRunReportRequest(run="no-such-run")),
            ("ListRuns", spb.ListRunsRequest(page_token="notatoken")),
            ("GetAttempt", spb.GetAttemptRequest(attempt="a-zzzz")),
            ("CompareSides", spb.CompareSidesRequest(a="x", b="y", list_limit=-1)),
        ]:
            remote, here = await _raised(getattr(wire, rpc)(request)), await _raised(getattr(local, rpc)(request))
            assert type(here) is type(remote) and type(here) is not errors.HemraError, rpc
            assert str(here) == str(remote), rpc


class _Raising(spb_grpc.StoreServiceServicer):
    """A store servicer whose GetRun raises what it is given, or sleeps that many seconds."""

    def __init__(self, raised):
        self.raised = raised
        self.calls = 0

    async def GetRun(self, request, context):
        self.calls += 1
        if isinstance(self.raised, float):
            await asyncio.sleep(self.raised)
            return spb.GetRunResponse()
        raise self.raised


def _raising_server(servicer) -> tuple:
    server = transport.new_server(TOKEN, (inprocess.STORE_SERVICE.full_name,))
    spb_grpc.add_StoreServiceServicer_to_server(servicer, server)
    return server, transport.bind(server, "127.0.0.1:0")


@pytest.mark.parametrize(
    "raised",
    [
        *(cls(f"{cls.__name__} happened") for cls in errors.TREE if cls is not errors.Unavailable),
        PlanError("a plan's own error travels as its shared class"),
        errors.NotFound("a line\nthat was two"),
        errors.InvalidArgument("x" * 5000),
        KeyError("not ours: a bug"),
        RuntimeError("unexpected\nwith a second line"),
    ],
    ids=lambda raised: type(raised).__name__,
)
async def test_whatever_a_servicer_raises_arrives_as_over_the_wire(raised):
    servicer = _Raising(raised)
    async with _over_grpc(_raising_server(servicer)) as wire:
        local = inprocess.store(servicer, auth.USER)
        request = spb.GetRunRequest(run="r")
        remote, here = await _raised(wire.GetRun(request)), await _raised(local.GetRun(request))
    assert type(here) is type(remote)
    assert str(here) == str(remote) and "\n" not in str(here)
    assert here.code == remote.code


async def test_unavailable_is_retried_then_raised_as_over_the_wire():
    """The client's policy is the wire's: an idempotent call is asked again while unavailable."""
    servicer = _Raising(errors.Unavailable("the database is away"))
    async with _over_grpc(_raising_server(servicer), retries=2) as wire:
        remote = await _raised(wire.GetRun(spb.GetRunRequest()))
        assert servicer.calls == 2
        local = transport.Client(None, inprocess.Stub(servicer, inprocess.STORE_SERVICE, auth.USER), retries=2)
        here = await _raised(local.GetRun(spb.GetRunRequest()))
        assert servicer.calls == 4
    assert type(here) is type(remote) is errors.Unavailable and str(here) == str(remote)


async def test_a_slow_call_ends_at_its_deadline_as_over_the_wire():
    servicer = _Raising(5.0)
    async with _over_grpc(_raising_server(servicer)) as wire:
        local = inprocess.store(servicer, auth.USER)
        remote = await _raised(wire.GetRun(spb.GetRunRequest(), timeout=0.2))
        started = asyncio.get_running_loop().time()
        here = await _raised(local.GetRun(spb.GetRunRequest(), timeout=0.2))
    assert asyncio.get_running_loop().time() - started < 2
    assert type(here) is type(remote) is errors.DeadlineExceeded and str(here) == str(remote)


async def test_a_server_not_serving_answers_unavailable_as_over_the_wire(tmp_path):
    async with _store(tmp_path) as store:
        server, port = build_server(store, "127.0.0.1:0", TOKEN)
        await server.start()  # not SERVING yet: transport.start was not called
        channel = transport.channel(f"127.0.0.1:{port}")
        try:
            wire = transport.store(channel, TOKEN, retries=1)
            local = inprocess.store(StoreServicer(store), auth.USER, health=server.health)
            remote = await _raised(wire.ListRuns(spb.ListRunsRequest()))
            here = await _raised(local.ListRuns(spb.ListRunsRequest()))
        finally:
            await channel.close()
            await server.stop(grace=0)
    assert type(here) is type(remote) is errors.Unavailable and str(here) == str(remote)


class _Folder:
    """A sandbox over a folder, as much of one as the file calls below ask of it; it refuses
    what a sandbox refuses (a path outside it)."""

    def __init__(self, root):
        self.root = root

    def _path(self, path: str):
        resolved = (self.root / path).resolve()
        if not resolved.is_relative_to(self.root):
            raise PermissionError(f"{path}: outside the sandbox")
        return resolved

    async def read_file(self, path: str, limit: int) -> bytes:
        with open(self._path(path), "rb") as file:
            return file.read(limit)

    async def file_size(self, path: str) -> int:
        return self._path(path).stat().st_size

    async def write_files(self, files) -> None:
        for path, content, _ in files:
            self._path(path).write_bytes(content)


async def test_the_harness_protocol_in_process_checks_the_attempts_token_as_over_the_wire(tmp_path):
    """The scorer calls an executor of its own process this way (services/compose/embedded.py):
    the attempt's token is checked by the servicer, unknown or revoked ones are refused, and
    answers and errors are the wire's."""
    from hemra.services.executor.protocol import Grant, Grants, HarnessServicer
    from hemra.v1 import harness_service_pb2 as hpb
    from hemra.v1 import harness_service_pb2_grpc as hpb_grpc

    grants = Grants()
    token = grants.issue(Grant("a-1", "verifier", _Folder(tmp_path.resolve()), None, "", 10**12))
    revoked = grants.issue(Grant("a-1", "verifier", _Folder(tmp_path.resolve()), None, "", 10**12))
    grants.revoke(revoked)
    servicer = HarnessServicer(grants)
    server = transport.new_server(TOKEN)  # the harness protocol takes attempt tokens, not roles'
    hpb_grpc.add_HarnessServiceServicer_to_server(servicer, server)
    port = transport.bind(server, "127.0.0.1:0")
    await transport.start(server)
    channel = transport.channel(f"127.0.0.1:{port}")
    try:
        clients = {
            "wire": lambda t: transport.harness(channel, t),
            "here": lambda t: inprocess.harness(servicer, t),
        }
        write = hpb.WriteFilesRequest(files=[hpb.FileContent(path="out.txt", content=b"42\n")])
        answers = {}
        for way, client in clients.items():
            await client(token).WriteFiles(write)
            read = hpb.ReadFilesRequest(
                files=[hpb.ReadFileRequest(path="out.txt", limit=10), hpb.ReadFileRequest(path="none", limit=10)]
            )
            answers[way] = [
                (await client(token).ReadFiles(read)).SerializeToString(),
                await _raised(client(token).ReadFile(hpb.ReadFileRequest(path="none"))),
                await _raised(client(token).WriteFiles(hpb.WriteFilesRequest(files=[hpb.FileContent(path="../x")]))),
                await _raised(client("not-a-token").ReadFile(hpb.ReadFileRequest(path="out.txt"))),
                await _raised(client(revoked).ReadFile(hpb.ReadFileRequest(path="out.txt"))),
                await _raised(client(token).ReadFiles(hpb.ReadFilesRequest(files=[hpb.ReadFileRequest(path="x")]))),
            ]
    finally:
        await channel.close()
        await transport.stop(server, grace=0)
    wire, here = answers["wire"], answers["here"]
    assert here[0] == wire[0] and b"42" in here[0]
    kinds = [errors.NotFound, errors.PermissionDenied, errors.Unauthenticated, errors.Unauthenticated]
    kinds.append(errors.InvalidArgument)
    for kind, remote, local in zip(kinds, wire[1:], here[1:], strict=True):
        assert type(local) is type(remote) is kind and str(local) == str(remote)
    assert not (tmp_path.parent / "x").exists()
