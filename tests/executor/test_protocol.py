"""The harness protocol's ReadFile and ReadFiles over a real gRPC server on 127.0.0.1: a read never
returns more than asked for, nor more than one call may carry, whatever the agent left in its sandbox."""

import grpc
import pytest

from hemra.services.common import errors, transport
from hemra.services.executor import protocol
from hemra.v1 import common_pb2 as pb
from hemra.v1 import harness_service_pb2 as hpb
from hemra.v1 import harness_service_pb2_grpc as hpb_grpc


class Files:
    """Stands in for a sandbox's files only (the sandboxes have tests of their own)."""

    def __init__(self, files: dict[str, bytes]):
        self.files = files

    async def read_file(self, path, limit=None):
        return self._file(path)[:limit]

    async def file_size(self, path):
        return len(self._file(path))

    def _file(self, path) -> bytes:
        if path not in self.files:
            raise FileNotFoundError(path)
        return self.files[path]


@pytest.fixture
async def harness_client():
    grants = protocol.Grants()
    server = transport.new_server()
    hpb_grpc.add_HarnessServiceServicer_to_server(protocol.HarnessServicer(grants), server)
    port = transport.bind(server, "127.0.0.1:0")
    await server.start()
    files = Files({"/app/small": b"hello", "/logs/artifacts/big": b"x" * (protocol.MAX_READ_BYTES + 1)})
    token = grants.issue(protocol.Grant("a-1", "harness", files, pb.Task(), "", float("inf")))
    channel = transport.channel(f"127.0.0.1:{port}")
    yield transport.harness(channel, token)
    await channel.close()
    await server.stop(None)


async def test_read_file__a_limit_returns_the_head_and_the_whole_size(harness_client):
    response = await harness_client.ReadFile(hpb.ReadFileRequest(path="/logs/artifacts/big", limit=10))
    assert response.content == b"x" * 10 and response.size_bytes == protocol.MAX_READ_BYTES + 1
    whole = await harness_client.ReadFile(hpb.ReadFileRequest(path="/app/small"))
    assert whole.content == b"hello" and whole.size_bytes == 5


async def test_read_file__a_file_over_the_call_limit_is_refused_without_a_limit(harness_client):
    with pytest.raises(errors.HemraError) as refused:
        await harness_client.ReadFile(hpb.ReadFileRequest(path="/logs/artifacts/big"))
    assert refused.value.code == grpc.StatusCode.RESOURCE_EXHAUSTED and "ask for a limit" in str(refused.value)


async def test_read_files__several_in_one_call_a_missing_one_is_not_found(harness_client):
    request = hpb.ReadFilesRequest(
        files=[
            hpb.ReadFileRequest(path="/app/small", limit=100),
            hpb.ReadFileRequest(path="/logs/verifier/reward.json", limit=100),
            hpb.ReadFileRequest(path="/logs/artifacts/big", limit=3),
        ]
    )
    files = (await harness_client.ReadFiles(request)).files
    assert [(f.path, f.found, f.content) for f in files] == [
        ("/app/small", True, b"hello"),
        ("/logs/verifier/reward.json", False, b""),
        ("/logs/artifacts/big", True, b"xxx"),
    ]
    assert [f.size_bytes for f in files] == [5, 0, protocol.MAX_READ_BYTES + 1]


@pytest.mark.parametrize(
    "limits",
    [(0,), (10, 0), (protocol.MAX_READ_BYTES, 1)],
    ids=["no-limit", "one-without-a-limit", "over-one-call"],
)
async def test_read_files__limits_are_required_and_bounded_by_one_call(harness_client, limits):
    request = hpb.ReadFilesRequest(files=[hpb.ReadFileRequest(path="/app/small", limit=n) for n in limits])
    with pytest.raises(errors.InvalidArgument):
        await harness_client.ReadFiles(request)


async def test_the_scorer_falls_back_to_one_read_a_file_on_an_older_executor():
    """An executor that predates ReadFiles answers UNIMPLEMENTED: the verifier's reads go one by one."""
    from hemra.services.scorer.servicer import ProtocolSandbox

    class Older(protocol.HarnessServicer):
        async def ReadFiles(self, request, context):
            await context.abort(grpc.StatusCode.UNIMPLEMENTED, "Method not implemented!")

    grants = protocol.Grants()
    server = transport.new_server()
    hpb_grpc.add_HarnessServiceServicer_to_server(Older(grants), server)
    port = transport.bind(server, "127.0.0.1:0")
    await server.start()
    token = grants.issue(protocol.Grant("a-1", "verifier", Files({"/a": b"1"}), pb.Task(), "", float("inf")))
    channel = transport.channel(f"127.0.0.1:{port}")
    try:
        sandbox = ProtocolSandbox(transport.harness(channel, token))
        assert await sandbox.read_many([("/a", 10), ("/b", 10)]) == [b"1", None]
    finally:
        await channel.close()
        await server.stop(None)
