"""Attack 3: the host sandbox shared the host's network, loopback services included (an
agent read an earlier attempt's results from the gateway's HTTP API on 127.0.0.1). Each
command now has a network namespace of its own; the harness's declared model endpoints,
and nothing else, are relayed into it."""

import asyncio
import time
from pathlib import Path

import pytest

from hemra.services.environments.capabilities import ENFORCES
from hemra.services.executor.sandboxes.host import HostSandbox
from hemra.v1 import common_pb2 as pb

#: Prints the body of GET url, or the error's class name.
FETCH = (
    "python3 -c 'import sys, urllib.request\ntry: print(urllib.request.urlopen(sys.argv[1], timeout=5)"
    ".read().decode())\nexcept Exception as exc: print(type(exc).__name__)' "
)


async def host_sandbox(tmp_path: Path, **kwargs) -> HostSandbox:
    (tmp_path / "task" / "environment").mkdir(parents=True, exist_ok=True)
    task = pb.Task(task_name="t", environment=pb.Environment(workdir="/app"))
    sandbox = HostSandbox("a-1", task, tmp_path / "task", tmp_path / "work", **kwargs)
    await sandbox.prepare()
    return sandbox


async def http_server(body: bytes) -> tuple[asyncio.AbstractServer, int]:
    """A tiny HTTP server on the host's 127.0.0.1 answering every request with `body`."""

    async def answer(reader, writer):
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s" % (len(body), body))
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(answer, "127.0.0.1", 0)
    return server, server.sockets[0].getsockname()[1]


async def test_the_hosts_loopback_services_are_unreachable(tmp_path):
    server, port = await http_server(b"verifier output of another attempt")
    sandbox = await host_sandbox(tmp_path)
    try:
        result = await sandbox.exec(
            f"{FETCH} http://127.0.0.1:{port}/; (echo > /dev/tcp/127.0.0.1/{port}) 2>&1 "
            f"&& echo connected; grep -c . /proc/net/tcp"
        )
        assert b"verifier output" not in result.stdout and b"connected" not in result.stdout
        assert result.stdout.split()[-1] == b"1"  # the header line: no socket of the host's is listed
        assert "network_block" in sandbox.enforces and "network_block" in ENFORCES["host"]
    finally:
        await sandbox.teardown()
        server.close()


def loopback_name() -> str:
    """A name of the host's own (not localhost) that its /etc/hosts maps to 127.0.0.1, as a model
    API's name would resolve on the host."""
    for line in Path("/etc/hosts").read_text().splitlines():
        fields = line.split("#")[0].split()
        for name in fields[1:] if fields[:1] == ["127.0.0.1"] else []:
            if "localhost" not in name:
                return name
    pytest.skip("no name of the host's maps to 127.0.0.1")


async def test_declared_endpoints_and_only_them_are_relayed(tmp_path):
    model, model_port = await http_server(b"model answer")
    other, other_port = await http_server(b"gateway secrets")
    name = loopback_name()
    sandbox = await host_sandbox(tmp_path, endpoints=[("127.0.0.1", model_port), (name, model_port)])
    try:
        result = await sandbox.exec(
            f"{FETCH} http://127.0.0.1:{model_port}/v1; {FETCH} http://{name}:"
            f"{model_port}/v1; {FETCH} http://127.0.0.1:{other_port}/; "
            f"getent hosts {name}",
            timeout=30,
        )
        lines = result.stdout.decode().splitlines()
        assert lines[:3] == ["model answer", "model answer", "URLError"], result.stderr
        assert lines[3].split() == ["127.77.0.1", name]  # the relay's own address for the name
        # The relay is the harness phase's: the verifier's commands reach nothing.
        await sandbox.stop_processes()
        after = await sandbox.exec(f"{FETCH} http://127.0.0.1:{model_port}/v1")
        assert after.stdout == b"URLError\n"
    finally:
        await sandbox.teardown()
        model.close()
        other.close()


async def test_a_relay_that_cannot_listen_is_the_sandboxs_failure(tmp_path):
    from hemra.services.executor.sandboxes import SandboxError

    sandbox = await host_sandbox(tmp_path, endpoints=[("127.0.0.1", 4242)])
    try:
        sandbox.relay.listeners[0] = type(sandbox.relay.listeners[0])("127.0.0.1", 4242, "0.sock", ("10.1.2.3",), False)
        with pytest.raises(SandboxError, match="relay"):
            await sandbox.exec("echo never")
    finally:
        await sandbox.teardown()


async def test_commands_without_endpoints_start_no_relay(tmp_path):
    sandbox = await host_sandbox(tmp_path)
    try:
        started = time.monotonic()
        result = await sandbox.exec("ls /run /opt 2>&1; echo end")
        assert b"hemra-relay" not in result.stdout and time.monotonic() - started < 2
    finally:
        await sandbox.teardown()


async def test_network_host_shares_the_hosts_network(tmp_path):
    server, port = await http_server(b"shared")
    sandbox = await host_sandbox(tmp_path, network="host", endpoints=[("127.0.0.1", port)])
    try:
        assert "network_block" not in sandbox.enforces
        assert (await sandbox.exec(f"{FETCH} http://127.0.0.1:{port}/")).stdout == b"shared\n"
    finally:
        await sandbox.teardown()
        server.close()


async def test_an_endpoint_below_1024_is_relayed_though_the_sandbox_user_has_no_capability(tmp_path):
    body = b"https-like port"

    async def answer(reader, writer):
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s" % (len(body), body))
        writer.close()

    for port in range(990, 1000):
        try:
            server = await asyncio.start_server(answer, "127.0.0.1", port)
            break
        except OSError:
            continue
    else:
        pytest.skip("no port below 1024 free on the host's 127.0.0.1")
    sandbox = await host_sandbox(tmp_path, endpoints=[("127.0.0.1", port)])
    try:
        result = await sandbox.exec(f"{FETCH} http://127.0.0.1:{port}/; grep CapEff /proc/self/status", timeout=30)
        assert result.stdout.decode().split() == ["https-like", "port", "CapEff:", "0000000000000000"]
    finally:
        await sandbox.teardown()
        server.close()
