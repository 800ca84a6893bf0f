"""The compose healthchecks' probe (services/common/probe.py) against real gRPC servers: it reads
what health.check reads, and says SERVING for nothing else, however the other end behaves."""

import asyncio
import socket
import subprocess
import sys

import grpc
import pytest

from hemra.services.common import health, probe
from tests.conftest import REPO

SERVICE = "hemra.v1.StoreService"


@pytest.fixture
async def server():
    """A gRPC server with HEMRA's health service on 127.0.0.1, not yet serving."""
    grpc_server = grpc.aio.server()
    state = health.Health(grpc_server, [SERVICE])
    port = grpc_server.add_insecure_port("127.0.0.1:0")
    await grpc_server.start()
    yield f"127.0.0.1:{port}", state
    await grpc_server.stop(None)


async def both(address: str, service: str = "") -> tuple[str, str]:
    """What the probe reads and what gRPC's own client reads."""
    return await asyncio.to_thread(probe.check, address, service), await health.check(address, service)


async def test_probe__reads_what_grpc_reads_as_a_server_becomes_ready_and_drains(server):
    address, state = server
    assert await both(address) == ("NOT_SERVING", "NOT_SERVING")
    assert await both(address, SERVICE) == ("NOT_SERVING", "NOT_SERVING")
    assert await both(address, health.LIVENESS) == ("SERVING", "SERVING")
    await state.serving()
    assert await both(address) == ("SERVING", "SERVING")
    assert await both(address, SERVICE) == ("SERVING", "SERVING")
    await state.not_serving("draining")
    assert await both(address) == ("NOT_SERVING", "NOT_SERVING")


async def test_probe__a_service_the_server_does_not_know_is_not_serving(server):
    address, state = server
    await state.serving()
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await health.check(address, "no.such.Service")
    assert raised.value.code() == grpc.StatusCode.NOT_FOUND
    with pytest.raises(probe.NotServing, match="refused the call"):
        await asyncio.to_thread(probe.check, address, "no.such.Service")


def _listener(answer: bytes | None):
    """A TCP server on loopback that reads what it is sent and answers `answer` (None: nothing
    at all), then keeps the connection open until the probe leaves."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()

    def serve():
        conn, _ = sock.accept()
        with conn:
            conn.recv(4096)
            if answer is not None:
                conn.sendall(answer)
            conn.settimeout(5)
            try:
                conn.recv(4096)
            except OSError:
                pass

    return sock, serve


@pytest.mark.parametrize(
    ("answer", "why"),
    [
        (None, "no answer in time"),
        (b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", "frame is too large"),
        (probe.frame(probe.GOAWAY, 0, 0, bytes(8)), "GOAWAY"),
        (probe.frame(probe.RST_STREAM, 0, probe.STREAM, bytes(4)), "reset the call"),
        # A message cut short: the rest never comes.
        (probe.frame(probe.DATA, 0, probe.STREAM, b"\x00\x00\x00\x00\x02\x08"), "no answer in time"),
        # A message that claims SERVING in a field the health answer does not have.
        (probe.frame(probe.DATA, 0, probe.STREAM, b"\x00\x00\x00\x00\x02\x10\x01"), "not a health status"),
        (probe.frame(probe.DATA, 0, probe.STREAM, b"\x01\x00\x00\x00\x02\x08\x01"), "compressed"),
        # A message that says it is 4 GB long: not read on until the deadline.
        (probe.frame(probe.DATA, 0, probe.STREAM, b"\x00\xff\xff\xff\xff\x08\x01"), "answer is too large"),
        # SERVING on another stream than the probe's call.
        (probe.frame(probe.DATA, 0, 3, b"\x00\x00\x00\x00\x02\x08\x01"), "no answer in time"),
    ],
)
async def test_probe__anything_but_a_health_answer_is_not_serving(answer, why):
    sock, serve = _listener(answer)
    with sock:
        served = asyncio.create_task(asyncio.to_thread(serve))
        with pytest.raises(probe.NotServing, match=why):
            await asyncio.to_thread(probe.check, f"127.0.0.1:{sock.getsockname()[1]}", "", 1.0)
        await served


async def test_probe__a_closed_port_is_not_serving():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(ConnectionRefusedError):
        await asyncio.to_thread(probe.check, f"127.0.0.1:{port}")


async def test_probe__as_the_healthcheck_runs_it__exit_status_and_one_line(server):
    address, state = server

    def run(*args: str) -> subprocess.CompletedProcess:
        command = [sys.executable, "-m", "hemra.services.common.probe", *args]
        return subprocess.run(command, capture_output=True, text=True, timeout=30, cwd=REPO)

    refused = await asyncio.to_thread(run, address)
    assert (refused.returncode, refused.stderr) == (1, f"error: {address}: NOT_SERVING\n")
    await state.serving()
    served = await asyncio.to_thread(run, address, SERVICE)
    assert (served.returncode, served.stdout) == (0, f"{address}: SERVING\n")
    for wrong in ((), ("127.0.0.1",), ("127.0.0.1:99999",), (address, SERVICE, "more")):
        assert (await asyncio.to_thread(run, *wrong)).returncode == 2, wrong
