"""The model relay: a container with no network reaches exactly its declared endpoints
(real servers on the host's loopback, the real engine), and nothing else."""

import asyncio
import hashlib
import os
import socket
import subprocess
import tempfile
import uuid
from pathlib import Path

import pytest

from hemra.services.executor.harnesses import driver_for
from hemra.services.executor.sandboxes import SandboxError, relay
from hemra.services.executor.sandboxes.docker import DockerSandbox
from hemra.services.executor.sandboxes.relay import RELAY_INSIDE, endpoint_of, plan
from hemra.v1 import common_pb2 as pb
from tests.executor.test_docker_sandbox import make_task

NODE = f"{RELAY_INSIDE}/node"


# -- Endpoints and their listeners (no engine needed) ---------------------------------------------


def test_endpoint_of__ports_default_by_scheme():
    assert endpoint_of("https://api.anthropic.com") == ("api.anthropic.com", 443)
    assert endpoint_of("http://127.0.0.1:8123/v1") == ("127.0.0.1", 8123)
    assert endpoint_of("http://models.internal/v1") == ("models.internal", 80)
    assert endpoint_of("http://[::1]:9000") == ("::1", 9000)
    with pytest.raises(ValueError, match="names no host"):
        endpoint_of("/v1/messages")
    with pytest.raises(ValueError, match="scheme 'ftp' has no default"):
        endpoint_of("ftp://files.example")


def test_plan__host_names_get_loopback_addresses_of_their_own():
    listeners = plan(
        [
            ("api.anthropic.com", 443),
            ("api.openai.com", 443),
            ("API.anthropic.com", 8443),
            ("127.0.0.1", 8000),
            ("localhost", 9000),
            ("api.openai.com", 443),
        ]
    )
    seen = [(item.host, item.port, item.addresses, item.named) for item in listeners]
    assert seen == [
        ("api.anthropic.com", 443, ("127.77.0.1",), True),
        ("api.openai.com", 443, ("127.77.0.2",), True),
        ("api.anthropic.com", 8443, ("127.77.0.1",), True),
        ("127.0.0.1", 8000, ("127.0.0.1",), False),
        ("localhost", 9000, ("127.0.0.1", "::1"), False),
    ]
    assert len({item.socket for item in listeners}) == 5


def test_plan__addresses_the_container_cannot_route_to_are_refused():
    with pytest.raises(SandboxError, match="model endpoint 10.1.2.3:443: the docker sandbox relays host names"):
        plan([("10.1.2.3", 443)])
    with pytest.raises(SandboxError, match="port is out of range"):
        plan([("localhost", 70000)])


# -- What each agent CLI declares -----------------------------------------------------------------


@pytest.mark.parametrize(
    "agent, env, model, expected",
    [
        ("claude-code", {"ANTHROPIC_BASE_URL": "http://127.0.0.1:8123"}, "", [("127.0.0.1", 8123)]),
        ("claude-code", {}, "", [("api.anthropic.com", 443)]),
        ("codex", {"OPENAI_BASE_URL": "http://localhost:9000/v1"}, "", [("localhost", 9000)]),
        ("codex", {}, "", [("api.openai.com", 443)]),
        ("pi", {"OPENAI_BASE_URL": "https://models.internal:8443/v1"}, "m", [("models.internal", 8443)]),
        ("pi", {"ANTHROPIC_BASE_URL": "http://[::1]:7000"}, "m", [("::1", 7000)]),
        ("pi", {}, "anthropic/claude-sonnet-4-5", [("api.anthropic.com", 443)]),
        ("pi", {}, "mistral/large", []),
    ],
)
def test_cli_driver__declares_the_endpoints_of_the_urls_it_passes(agent, env, model, expected, monkeypatch):
    for name in ("ANTHROPIC_BASE_URL", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    harness = pb.Harness(kind="cli", agent=agent, model=model, env=[*env, "ANTHROPIC_API_KEY", "OPENAI_API_KEY"])
    assert driver_for(harness).endpoints(harness) == expected


def test_cli_driver__a_base_url_without_a_host_is_named_in_the_error(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "localhost-without-scheme")
    harness = pb.Harness(kind="cli", agent="claude-code", env=["ANTHROPIC_BASE_URL"])
    with pytest.raises(
        SandboxError, match="ANTHROPIC_BASE_URL: the agent's model URL 'localhost-without-scheme' names no host"
    ):
        driver_for(harness).endpoints(harness)


def test_acp_driver__declares_the_base_urls_its_harness_names(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:8124")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    harness = pb.Harness(
        kind="acp", agent="@zed-industries/claude-agent-acp", env=["ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"]
    )
    assert driver_for(harness).endpoints(harness) == [("127.0.0.1", 8124)]
    bare = pb.Harness(kind="acp", agent="@zed-industries/claude-agent-acp", env=["ANTHROPIC_API_KEY"])
    assert driver_for(bare).endpoints(bare) == []


def test_other_drivers__declare_no_endpoints():
    harness = pb.Harness(kind="builtin", harness_name="oracle")
    assert driver_for(harness).endpoints(harness) == []


# -- Through the real engine ----------------------------------------------------------------------


@pytest.fixture
async def echo_server():
    """A TCP server on the host's loopback: answers a line with "echo:<line>" and closes; after
    the line "stream", reads to the end of input, then answers its byte count and sha256
    (so only a half-closing client gets an answer)."""

    async def serve(reader, writer):
        line = (await reader.readline()).decode().strip()
        if line == "stream":
            data = await reader.read()
            writer.write(f"{len(data)} {hashlib.sha256(data).hexdigest()}\n".encode())
        else:
            writer.write(f"echo:{line}\n".encode())
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    yield server.sockets[0].getsockname()[1]
    server.close()
    await server.wait_closed()


@pytest.fixture
def other_port():
    """A second service on the host's loopback that no endpoint names."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        yield listener.getsockname()[1]


async def open_relayed(tmp_path, endpoints) -> DockerSandbox:
    task, task_dir = make_task(tmp_path)
    box = DockerSandbox(f"r-{uuid.uuid4().hex[:8]}", task, task_dir, tmp_path / "work", endpoints=endpoints)
    await box.prepare()
    return box


def tcp_line(host: str, port: int, line: str) -> str:
    """bash only (no curl, no Python): one line out through /dev/tcp, the answer back."""
    return f"exec 3<>/dev/tcp/{host}/{port} && printf '%s\\n' {line} >&3 && timeout 10 cat <&3"


async def test_relay__declared_endpoint_reached_other_host_ports_not(tmp_path, docker_engine, echo_server, other_port):
    box = await open_relayed(tmp_path, [("127.0.0.1", echo_server)])
    sockets = box.relay.folder
    try:
        info = docker_engine.api.inspect_container(box.container_id)
        assert info["HostConfig"]["NetworkMode"] == "none"
        # The relay listens before prepare returns: no waiting here.
        reached = await box.exec(tcp_line("127.0.0.1", echo_server, "ping"), timeout=30)
        assert reached.exit_code == 0, reached.stderr
        assert reached.stdout.decode() == "echo:ping\n"
        blocked = await box.exec(
            f"(echo > /dev/tcp/127.0.0.1/{other_port}) 2>/dev/null && echo reached; ls /sys/class/net", timeout=30
        )
        assert blocked.stdout.decode().split() == ["lo"]
        # The relay's own folders are read-only: the agent cannot replace a socket.
        replaced = await box.exec("rm -f /run/hemra-relay/0.sock", timeout=30)
        assert replaced.exit_code != 0 and b"Read-only file system" in replaced.stderr
    finally:
        await box.teardown()
    assert box.relay.folder is None and not sockets.exists()


async def test_relay__host_name_keeps_its_url_and_big_streams_half_close(tmp_path, echo_server):
    name = socket.gethostname()
    assert socket.gethostbyname(name).startswith("127."), "this test needs the host's name on its loopback"
    box = await open_relayed(tmp_path, [(name, echo_server)])
    try:
        resolved = await box.exec(f"getent hosts {name}", timeout=30)
        assert resolved.stdout.decode().split()[0] == "127.77.0.1"
        reached = await box.exec(tcp_line(name, echo_server, "by-name"), timeout=30)
        assert reached.stdout.decode() == "echo:by-name\n", reached.stderr
        # 8 MiB out, then the client ends its side; the answer still comes back whole.
        client = (
            "const s=require('net').connect(+process.argv[2],process.argv[1],()=>{"
            "s.write('stream\\\\n');s.end(Buffer.alloc(8*1024*1024,7))});let a='';s.on('data',d=>a+=d);"
            "s.on('end',()=>process.stdout.write(a))"
        )
        big = await box.exec(f'{NODE} -e "{client}" {name} {echo_server}', timeout=60)
        expected = hashlib.sha256(bytes([7]) * 8 * 1024 * 1024).hexdigest()
        assert big.stdout.decode() == f"{8 * 1024 * 1024} {expected}\n", big.stderr
    finally:
        await box.teardown()


async def test_relay__concurrent_connections_and_restart(tmp_path, echo_server):
    box = await open_relayed(tmp_path, [("localhost", echo_server)])
    try:
        many = " & ".join(f"({tcp_line('localhost', echo_server, f'n{i}')} > /tmp/out{i})" for i in range(8))
        together = await box.exec(f"{many}; wait; cat /tmp/out*", timeout=60)
        assert sorted(together.stdout.decode().split()) == sorted(f"echo:n{i}" for i in range(8))
        # A container whose every process was killed (a kill that did not take) gets its relay
        # back when the next command starts it again.
        await box.kill()
        again = await box.exec(tcp_line("localhost", echo_server, "again"), timeout=30)
        assert again.stdout.decode() == "echo:again\n", again.stderr
    finally:
        await box.teardown()


async def test_relay__ipv6_loopback_endpoint(tmp_path):
    """The engine gives containers no IPv6; the relay turns it on for their loopback only."""

    async def serve(reader, writer):
        writer.write(b"v6:" + await reader.readline())
        await writer.drain()
        writer.close()

    try:
        server = await asyncio.start_server(serve, "::1", 0)
    except OSError as exc:
        pytest.skip(f"this host has no IPv6 loopback to serve on: {exc}")
    port = server.sockets[0].getsockname()[1]
    box = await open_relayed(tmp_path, [("::1", port)])
    try:
        reached = await box.exec(tcp_line("::1", port, "ping"), timeout=30)
        assert reached.stdout.decode() == "v6:ping\n", reached.stderr
        assert (await box.exec("ls /sys/class/net", timeout=30)).stdout.decode().split() == ["lo"]
    finally:
        await box.teardown()
        server.close()


async def test_relay__endpoint_down_closes_the_agents_connection(tmp_path, other_port):
    with socket.socket() as gone:  # a port nothing listens on
        gone.bind(("127.0.0.1", 0))
        port = gone.getsockname()[1]
    box = await open_relayed(tmp_path, [("127.0.0.1", port)])
    try:
        tried = await box.exec(tcp_line("127.0.0.1", port, "anyone"), timeout=30)
        assert tried.stdout == b"" and not tried.timed_out
    finally:
        await box.teardown()


def test_relay__not_started_on_the_hosts_network(tmp_path):
    """There the agent reaches its endpoints itself (and their ports are taken on loopback)."""
    task, task_dir = make_task(tmp_path)
    endpoints = [("127.0.0.1", 8123)]
    on_host = DockerSandbox("h-1", task, task_dir, tmp_path / "work", network="host", endpoints=endpoints)
    closed = DockerSandbox("h-2", task, task_dir, tmp_path / "work", endpoints=endpoints)
    assert on_host.relay.endpoints == [] and closed.relay.endpoints == endpoints


async def test_relay__no_endpoints_no_relay(tmp_path, docker_engine):
    box = await open_relayed(tmp_path, [])
    try:
        info = docker_engine.api.inspect_container(box.container_id)
        assert not any("/run/hemra-relay" in bind for bind in info["HostConfig"]["Binds"])
        absent = await box.exec("ls /opt/hemra/relay /run/hemra-relay", timeout=30)
        assert absent.exit_code != 0 and b"No such file or directory" in absent.stderr
    finally:
        await box.teardown()


def test_remove_orphans__only_folders_of_executors_that_no_longer_run():
    ended = subprocess.Popen(["true"])
    ended.wait()
    dead = Path(tempfile.mkdtemp(prefix=f"{relay.FOLDER_PREFIX}{ended.pid}-"))
    (dead / "0.sock").write_text("")
    mine = Path(tempfile.mkdtemp(prefix=f"{relay.FOLDER_PREFIX}{os.getpid()}-"))
    try:
        removed = relay.remove_orphans()
        assert dead in removed and not dead.exists()
        assert mine not in removed and mine.exists()
    finally:
        mine.rmdir()
