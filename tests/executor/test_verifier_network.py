"""verifier.network = "bridge" in the Docker sandbox against the real engine: the attempt's own
network, on which the verifier reaches the task's service and nothing else (not the host's
loopback nor a bridge address of the host, not another attempt's containers), and which is
gone with the attempt on every path."""

import asyncio
import contextlib
import hashlib
import ipaddress
import json
import shlex
import socket
import subprocess
import sys
import threading
import uuid
from pathlib import Path

import pytest

from hemra.services.executor.sandboxes import docker as sandbox_module
from hemra.services.executor.sandboxes.base import wait_for_removals
from hemra.services.executor.sandboxes.docker import DockerSandbox
from hemra.services.executor.sandboxes.docker import cleanup as sandbox_cleanup
from hemra.v1 import common_pb2 as pb

pytestmark = pytest.mark.usefixtures("docker_engine")

CARRY = ["/app", "/logs/agent", "/logs/artifacts"]
#: The task's service: what its image runs (CMD), answering with the workspace's answer.txt.
SERVE = """import http.server, pathlib
class Answer(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        path = pathlib.Path("/app/answer.txt")
        body = path.read_bytes() if path.exists() else b"no answer"
        self.send_response(200)
        self.end_headers()
        self.wfile.write(body)
http.server.ThreadingHTTPServer(("0.0.0.0", 8080), Answer).serve_forever()
"""
DOCKERFILE = """FROM hemra-base:bookworm
WORKDIR /app
COPY serve.py /srv/serve.py
CMD ["python3", "/srv/serve.py"]
"""
#: Run in the verifier's container: connect to each (host, port) given, all at once; print
#: what each answered (the first bytes of an HTTP GET) or the error.
PROBE = r"""
import json, socket, sys, threading
found = {}
def probe(host, port):
    try:
        with socket.create_connection((host, port), timeout=3) as s:
            s.sendall(b"GET / HTTP/1.0\r\nHost: x\r\n\r\n")
            s.settimeout(3)
            data = b""
            while chunk := s.recv(4096):
                data += chunk
            found[f"{host}:{port}"] = "answered: " + data.decode(errors="replace").split("\r\n\r\n")[-1]
    except Exception as exc:
        found[f"{host}:{port}"] = type(exc).__name__
threads = [threading.Thread(target=probe, args=(h, int(p))) for h, p in (a.rsplit(":", 1) for a in sys.argv[1:])]
[t.start() for t in threads]
[t.join() for t in threads]
print(json.dumps(found))
"""


def make_task(tmp_path: Path, dockerfile: str = DOCKERFILE) -> tuple[pb.Task, Path]:
    task_dir = tmp_path / f"task-{uuid.uuid4().hex[:6]}"
    (task_dir / "environment").mkdir(parents=True)
    (task_dir / "environment" / "Dockerfile").write_text(dockerfile)
    (task_dir / "environment" / "serve.py").write_text(SERVE)
    task = pb.Task(
        task_name="served",
        digest="sha256:" + hashlib.sha256((dockerfile + SERVE).encode()).hexdigest(),
        environment=pb.Environment(workdir="/app", cpus=1, memory_mb=256),
    )
    return task, task_dir


async def attempt_on_bridge(tmp_path: Path, answer: str) -> tuple[DockerSandbox, DockerSandbox]:
    """An attempt whose agent wrote `answer` and whose verifier's sandbox is ready: (agent's, verifier's)."""
    task, task_dir = make_task(tmp_path)
    box = DockerSandbox(f"vn-{uuid.uuid4().hex[:8]}", task, task_dir, tmp_path / "work", verifier_network="bridge")
    box.reserve_fresh(CARRY)
    try:
        await box.prepare()
        await box.exec(f"echo -n {answer} > /app/answer.txt")
        await box.stop_processes()
        return box, await box.fresh(CARRY)
    except BaseException:
        await box.teardown()
        raise


async def probe(verifier: DockerSandbox, *addresses: str) -> dict[str, str]:
    result = await verifier.exec(shlex.join(["python3", "-c", PROBE, *addresses]), timeout=60)
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


@contextlib.contextmanager
def listener(address: str):
    """A TCP server on the host at `address` (port 0) answering 'host-secret'; yields its port."""
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind((address, 0))
    server.listen()
    stop = threading.Event()

    def serve():
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            with conn:
                conn.sendall(b"HTTP/1.0 200 OK\r\n\r\nhost-secret")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1]
    finally:
        stop.set()
        thread.join()
        server.close()


@contextlib.contextmanager
def host_bridge(docker_engine):
    """A Docker network of the test's own whose bridge has an address on the host (the engine's
    default for a bridge): yields that address, where the test listens like a host service."""
    network = docker_engine.api.create_network(f"hemra-test-{uuid.uuid4().hex[:8]}", driver="bridge", internal=True)
    try:
        config = docker_engine.api.inspect_network(network["Id"])["IPAM"]["Config"][0]
        yield config["Gateway"]
    finally:
        docker_engine.api.remove_network(network["Id"])


def address_of(docker_engine, box: DockerSandbox) -> str:
    networks = docker_engine.api.inspect_container(box.container_id)["NetworkSettings"]["Networks"]
    [(_, endpoint)] = networks.items()
    return endpoint["IPAddress"]


def gone(docker_engine, attempt_id: str) -> bool:
    containers = docker_engine.api.containers(all=True, filters={"name": f"hemra-{attempt_id}"})
    networks = docker_engine.api.networks(filters={"label": f"hemra.attempt={attempt_id}"})
    return containers == [] and networks == []


async def test_bridge__the_verifier_reaches_its_tasks_service_and_nothing_else(tmp_path, docker_engine):
    with host_bridge(docker_engine) as bridge_address, listener("127.0.0.1") as loop_port:
        with listener(bridge_address) as bridge_port:
            one, one_verifier = await attempt_on_bridge(tmp_path, "42")
            try:
                other, other_verifier = await attempt_on_bridge(tmp_path, "other")
                try:
                    network = docker_engine.api.inspect_network(one.network_id)
                    [ipam] = network["IPAM"]["Config"]
                    gateway = ipam["Gateway"]
                    assert network["Internal"] and network["Labels"]["hemra.attempt"] == one.attempt_id
                    assert ipaddress.ip_network(ipam["Subnet"]).subnet_of(ipaddress.ip_network("100.64.0.0/10"))
                    # Nothing on the host holds the network's gateway address: no host service can answer there.
                    with pytest.raises(OSError), socket.socket() as s:
                        s.bind((gateway, 0))
                    # The agent's own container never joins it: its network stayed closed all along.
                    assert docker_engine.api.inspect_container(one.container_id)["HostConfig"]["NetworkMode"] == "none"
                    # Only the attempt's own containers are on it: its verifier's and its service's.
                    assert {c["Name"] for c in network["Containers"].values()} == {
                        f"hemra-{one.attempt_id}-verifier",
                        f"hemra-{one.attempt_id}-task",
                    }
                    assert one_verifier.network_note == {
                        "network": "bridge",
                        "service": "task",
                        "command": ["python3", "/srv/serve.py"],
                    }
                    found = await probe(
                        one_verifier,
                        "task:8080",
                        f"127.0.0.1:{loop_port}",
                        f"{bridge_address}:{bridge_port}",
                        f"{gateway}:{loop_port}",
                        f"{address_of(docker_engine, other_verifier.service)}:8080",
                        f"{address_of(docker_engine, other_verifier)}:8080",
                        f"hemra-{other.attempt_id}-task:8080",
                    )
                    assert found.pop("task:8080") == "answered: 42"  # the service sees the agent's workspace
                    assert not [answer for answer in found.values() if answer.startswith("answered")], found
                    # And the other attempt's verifier reaches its own service, not this one's.
                    assert (await probe(other_verifier, "task:8080"))["task:8080"] == "answered: other"
                    for box in (one_verifier, one_verifier.service):
                        config = docker_engine.api.inspect_container(box.container_id)["HostConfig"]
                        # No raw sockets; names beyond the network's own are never forwarded to the host's resolvers.
                        assert config["CapDrop"] == ["NET_RAW"] and config["Dns"] == ["0.0.0.0"]
                    looked_up = await one_verifier.exec(
                        "getent hosts verifier task hemra-no-such-name.example", timeout=30
                    )
                    assert looked_up.exit_code == 2 and looked_up.duration < 10  # not found, and fast
                    assert sorted(line.split()[1] for line in looked_up.stdout.decode().splitlines()) == [
                        "task",
                        "verifier",
                    ]
                finally:
                    await other_verifier.teardown()
                    await other.teardown()
            finally:
                await one_verifier.teardown()
                await one.teardown()
    await asyncio.to_thread(wait_for_removals)
    assert gone(docker_engine, one.attempt_id) and gone(docker_engine, other.attempt_id)


async def test_bridge__network_and_containers_gone_when_the_attempt_ends_before_its_verifier(tmp_path, docker_engine):
    task, task_dir = make_task(tmp_path)
    box = DockerSandbox(f"vn-{uuid.uuid4().hex[:8]}", task, task_dir, tmp_path / "work", verifier_network="bridge")
    box.reserve_fresh(CARRY)
    await box.prepare()
    spare = await box._spare
    assert spare.service is not None and spare.service.container_id
    assert not docker_engine.api.inspect_container(spare.service.container_id)["State"]["Running"]  # not yet
    await box.teardown()  # cancelled, or the harness failed: no verifier ran
    await asyncio.to_thread(wait_for_removals)
    assert gone(docker_engine, box.attempt_id)


async def test_bridge__an_image_without_a_command_runs_no_service(tmp_path, docker_engine):
    task, task_dir = make_task(tmp_path, "FROM hemra-base:bookworm\nWORKDIR /app\n")
    box = DockerSandbox(f"vn-{uuid.uuid4().hex[:8]}", task, task_dir, tmp_path / "work", verifier_network="bridge")
    box.reserve_fresh(CARRY)
    await box.prepare()
    try:
        await box.stop_processes()
        verifier = await box.fresh(CARRY)
        try:
            assert verifier.service is None and verifier.network_note["service"] == ""
            assert (await probe(verifier, "task:8080"))["task:8080"] == "gaierror"
        finally:
            await verifier.teardown()
    finally:
        await box.teardown()
    await asyncio.to_thread(wait_for_removals)
    assert gone(docker_engine, box.attempt_id)


def test_orphans__a_dead_executors_attempt_network_is_swept(docker_engine):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    labels = {**sandbox_cleanup.process_labels(), "hemra.pid": str(dead.pid), "hemra.started": "", "hemra.instance": ""}
    attempt = f"orphan-{uuid.uuid4().hex[:6]}"
    network = docker_engine.api.create_network(
        f"hemra-{attempt}", driver="bridge", internal=True, labels={"hemra.attempt": attempt, **labels}
    )
    mine = docker_engine.api.create_network(
        f"hemra-{attempt}-mine",
        internal=True,
        labels={"hemra.attempt": attempt + "-mine", **sandbox_cleanup.process_labels()},
    )
    try:
        sandbox_module.remove_orphans()
        assert docker_engine.api.networks(ids=[network["Id"]]) == []
        assert docker_engine.api.networks(ids=[mine["Id"]]) != []  # this live process's own
    finally:
        for made in (network, mine):
            with contextlib.suppress(Exception):
                docker_engine.api.remove_network(made["Id"])


async def test_bridge__more_attempts_at_once_than_the_engines_own_pools_hold(tmp_path, docker_engine):
    """The engine's default pools hold about 30 networks; attempts draw /28s of their own."""
    task, task_dir = make_task(tmp_path)
    boxes = [
        DockerSandbox(f"vn-{uuid.uuid4().hex[:8]}", task, task_dir, tmp_path / "work", verifier_network="bridge")
        for _ in range(40)
    ]
    try:
        for box in boxes:
            await asyncio.to_thread(box._create_network)
        subnets = {docker_engine.api.inspect_network(b.network_id)["IPAM"]["Config"][0]["Subnet"] for b in boxes}
        assert len(subnets) == 40
    finally:
        for box in boxes:
            await box.teardown()
        await asyncio.to_thread(wait_for_removals)
    assert all(gone(docker_engine, box.attempt_id) for box in boxes)
