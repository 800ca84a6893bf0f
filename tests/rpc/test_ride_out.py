"""A service riding out the store's restart: a real store server stopped and started again on
the same port while an executor's client waits. Without riding out, the call fails as soon as
its few quick retries are spent, and the attempt in hand with it (tests/deploy restarts the
compose stack's store for real)."""

import asyncio
import time

import grpc
import pytest

from hemra.services.common import errors, transport
from hemra.services.store.server import build_server
from hemra.services.store.service import Store
from hemra.v1 import store_service_pb2 as spb
from hemra.v1 import store_service_pb2_grpc

DOWN_SECS = 1.5


@pytest.fixture
async def store(tmp_path):
    store = await Store.open(f"sqlite:///{tmp_path / 'hemra.db'}", tmp_path / "blobs")
    yield store
    await store.close()


async def _serve(store, port: int = 0):
    server, port = build_server(store, f"127.0.0.1:{port}")
    await transport.start(server)
    return server, port


async def _restarted_later(store, port: int):
    await asyncio.sleep(DOWN_SECS)
    return await _serve(store, port)


async def test_an_idempotent_call_rides_out_a_restart(store):
    server, port = await _serve(store)
    await transport.stop(server, grace=None)
    channel = transport.channel(f"127.0.0.1:{port}")
    restart = asyncio.create_task(_restarted_later(store, port))
    try:
        # One try, then riding out alone: the quick retries could cover a short outage by luck.
        client = transport.Client(channel, transport.store(channel)._stub, retries=1, ride_out=30)
        started = time.monotonic()
        answer = await client.FindMissingBlobs(spb.FindMissingBlobsRequest(digests=["sha256:" + "0" * 64]))
        assert list(answer.missing) == ["sha256:" + "0" * 64]
        assert time.monotonic() - started >= DOWN_SECS  # it did wait for the new server
    finally:
        server, _ = await restart
        await channel.close()
        await transport.stop(server, grace=None)


async def test_without_riding_out_the_call_fails_while_the_store_is_away(store):
    server, port = await _serve(store)
    await transport.stop(server, grace=None)
    channel = transport.channel(f"127.0.0.1:{port}")
    try:
        client = transport.Client(channel, transport.store(channel)._stub, retries=1)
        with pytest.raises(errors.Unavailable):
            await client.FindMissingBlobs(spb.FindMissingBlobsRequest())
    finally:
        await channel.close()


async def test_a_call_that_must_not_repeat_is_not_ridden_out(store):
    """ClaimJob leases a job: repeated after a lost answer, it would lease a second one."""
    server, port = await _serve(store)
    await transport.stop(server, grace=None)
    channel = transport.channel(f"127.0.0.1:{port}")
    try:
        client = transport.store(channel, ride_out=30)
        started = time.monotonic()
        with pytest.raises(errors.Unavailable):
            await client.ClaimJob(spb.ClaimJobRequest(worker="w"))
        assert time.monotonic() - started < 5
    finally:
        await channel.close()


class _CancelsFirst(store_service_pb2_grpc.StoreServiceServicer):
    """A store on its way down: it cancels the first call it gets, as a server stopping does
    with the calls in flight, and answers the next."""

    def __init__(self):
        self.calls = 0

    async def FindMissingBlobs(self, request, context):
        self.calls += 1
        if self.calls == 1:
            await context.abort(grpc.StatusCode.CANCELLED, "the server is stopping")
        return spb.FindMissingBlobsResponse(missing=list(request.digests))


async def test_an_idempotent_call_the_server_cancelled_on_its_way_down_is_tried_again():
    servicer = _CancelsFirst()
    server = grpc.aio.server()
    store_service_pb2_grpc.add_StoreServiceServicer_to_server(servicer, server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    channel = transport.channel(f"127.0.0.1:{port}")
    try:
        client = transport.store(channel)
        answer = await client.FindMissingBlobs(spb.FindMissingBlobsRequest(digests=["sha256:" + "1" * 64]))
        assert list(answer.missing) == ["sha256:" + "1" * 64] and servicer.calls == 2
    finally:
        await channel.close()
        await server.stop(None)
