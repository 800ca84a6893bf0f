"""The Docker sandbox against the real engine: images built from the task's Dockerfile,
one container per attempt with its limits and no network, files, timeouts, OOM, cleanup."""

import asyncio
import contextlib
import hashlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

import pytest

from hemra.services.environments import images
from hemra.services.environments.images import BuildFailed
from hemra.services.executor import processes
from hemra.services.executor.sandboxes import docker as sandbox_module
from hemra.services.executor.sandboxes.base import wait_for_removals
from hemra.services.executor.sandboxes.docker import DockerSandbox
from hemra.services.executor.sandboxes.docker import cleanup as sandbox_cleanup
from hemra.v1 import common_pb2 as pb

pytestmark = pytest.mark.usefixtures("docker_engine")

DOCKERFILE = """FROM debian:bookworm-slim
ENV FROM_IMAGE=baked
WORKDIR /app
COPY data/ /app/data/
RUN echo built > /app/built.txt
"""


def make_task(
    tmp_path: Path, dockerfile: str = DOCKERFILE, fresh: bool = False, env=None, cpus: float = 1.0, memory_mb: int = 256
) -> tuple[pb.Task, Path]:
    """A task folder and its message; the digest follows the content (or is new with `fresh`)."""
    task_dir = tmp_path / f"task-{uuid.uuid4().hex[:6]}"
    (task_dir / "environment" / "data").mkdir(parents=True)
    (task_dir / "environment" / "Dockerfile").write_text(dockerfile)
    (task_dir / "environment" / "data" / "input.txt").write_text("hello\n")
    seed = dockerfile + (uuid.uuid4().hex if fresh else "")
    task = pb.Task(
        task_name="t",
        digest="sha256:" + hashlib.sha256(seed.encode()).hexdigest(),
        environment=pb.Environment(workdir="/app", env=env or {}, cpus=cpus, memory_mb=memory_mb),
    )
    return task, task_dir


@pytest.fixture
def fresh_images(docker_engine):
    """Tags of images a test builds for digests of its own; removed afterwards."""
    tags: list[str] = []
    yield tags
    for tag in tags:
        try:
            docker_engine.api.remove_image(tag, force=True)
        except Exception:  # already gone
            pass


async def open_box(tmp_path, name=None, mounts=None, **kwargs) -> DockerSandbox:
    task, task_dir = make_task(tmp_path, **kwargs)
    box = DockerSandbox(name or f"t-{uuid.uuid4().hex[:8]}", task, task_dir, tmp_path / "work", mounts)
    await box.prepare()
    return box


def container(docker_engine, box: DockerSandbox) -> dict:
    return docker_engine.api.inspect_container(box.container_id)


async def test_environment__image_built_with_env_workdir_copies_and_run_steps(tmp_path):
    box = await open_box(tmp_path, env={"FROM_TASK": "toml"})
    try:
        result = await box.exec(
            'pwd; echo "$FROM_IMAGE $FROM_TASK"; cat data/input.txt built.txt; hostname', env={"FROM_CALL": "x"}
        )
        assert result.stdout.decode().split("\n")[:5] == ["/app", "baked toml", "hello", "built", "hemra"]
        assert result.exit_code == 0 and not result.timed_out
    finally:
        await box.teardown()


async def test_container__limits_labels_and_no_network(tmp_path, docker_engine):
    box = await open_box(tmp_path, cpus=1.5, memory_mb=300)
    try:
        info = container(docker_engine, box)
        assert info["HostConfig"]["NanoCpus"] == 1_500_000_000
        assert info["HostConfig"]["Memory"] == info["HostConfig"]["MemorySwap"] == 300 * 1024 * 1024
        assert info["HostConfig"]["NetworkMode"] == "none"
        labels = info["Config"]["Labels"]
        assert labels["hemra.attempt"] == box.attempt_id
        assert labels["hemra.executor"] == f"{socket.gethostname()}:{os.getpid()}"
        assert labels["hemra.owner"] == sandbox_cleanup.owner()
        with socket.socket() as listener:  # a service on the host's loopback stays unreachable
            listener.bind(("127.0.0.1", 0))
            listener.listen()
            port = listener.getsockname()[1]
            probe = await box.exec(f"ls /sys/class/net; (echo > /dev/tcp/127.0.0.1/{port}) 2>/dev/null && echo reached")
        assert probe.stdout.decode().split() == ["lo"]
    finally:
        await box.teardown()


async def test_network__opened_by_the_run_reaches_the_hosts_loopback(tmp_path, docker_engine):
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        task, task_dir = make_task(tmp_path)
        box = DockerSandbox(f"net-{uuid.uuid4().hex[:8]}", task, task_dir, tmp_path / "work", network="host")
        await box.prepare()
        try:
            assert container(docker_engine, box)["HostConfig"]["NetworkMode"] == "host"
            assert "network_block" not in box.enforces and "network_block" in DockerSandbox.enforces
            probe = await box.exec(f"(echo > /dev/tcp/127.0.0.1/{port}) 2>/dev/null && echo reached")
            assert probe.stdout == b"reached\n"
        finally:
            await box.teardown()


async def test_image__cached_by_digest_and_one_build_for_concurrent_attempts(tmp_path, monkeypatch, fresh_images):
    task, task_dir = make_task(tmp_path, fresh=True)
    fresh_images.extend([images.image_tag(task), images.image_tag(task, keep_history=True)])
    builds = []
    real_build = images._build
    monkeypatch.setattr(images, "_build", lambda *a, **k: (builds.append(a[4]), real_build(*a, **k)))
    results = []
    threads = [threading.Thread(target=lambda: results.append(images.ensure_image(task, task_dir))) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    # The environment's image, then HEMRA's history layer on it: each built once.
    assert results == [images.image_tag(task)] * 4 and builds == [images.image_tag(task, keep_history=True), results[0]]
    started = time.monotonic()
    images.ensure_image(task, task_dir)
    assert len(builds) == 2 and time.monotonic() - started < 2


async def test_build_failure__raises_with_the_build_log(tmp_path, fresh_images):
    broken = "FROM debian:bookworm-slim\nRUN echo about-to-fail && exit 3\n"
    task, task_dir = make_task(tmp_path, dockerfile=broken, fresh=True)
    fresh_images.append(images.image_tag(task, keep_history=True))
    box = DockerSandbox("broken-1", task, task_dir, tmp_path / "work")
    with pytest.raises(BuildFailed) as raised:
        await box.prepare()
    assert "about-to-fail" in raised.value.log and "returned a non-zero code: 3" in str(raised.value)
    await box.teardown()


async def test_files__bound_and_container_paths(tmp_path):
    box = await open_box(tmp_path)
    try:
        await box.write_files(
            [
                ("/app/src/new.py", b"print(1)\n", True),
                ("/logs/agent/a.txt", b"log", False),
                ("/tests/test.sh", b"#!/bin/bash\n", True),
                ("rel.txt", b"relative", False),
            ]
        )
        seen = await box.exec("stat -c '%a %n' /app/src/new.py /tests/test.sh; cat /logs/agent/a.txt /app/rel.txt")
        assert seen.stdout.decode().split("\n")[:3] == ["755 /app/src/new.py", "755 /tests/test.sh", "logrelative"]
        await box.exec("mkdir -p /logs/artifacts/deep && echo made > /logs/artifacts/deep/x; echo here > /app/out")
        assert await box.read_file("/logs/artifacts/deep/x") == b"made\n"
        assert await box.read_file("/app/out") == b"here\n"
        assert await box.read_file("/app/data/input.txt") == b"hello\n"
        assert await box.list_files("/logs/artifacts") == ["/logs/artifacts/deep/x"]
        assert await box.list_files("/app/src") == ["/app/src/new.py"]
        assert await box.list_files("/nowhere") == []
        for missing in ("/app/none", "/logs/verifier/reward.txt"):
            with pytest.raises(FileNotFoundError):
                await box.read_file(missing)
        await box.remove_path("/tests")
        await box.remove_path("/app/src")
        await box.remove_path("/app/never-was")
        after = await box.exec("ls -A /tests; ls /app")
        assert after.stdout.decode().split() == ["built.txt", "data", "out", "rel.txt"]
    finally:
        await box.teardown()


async def test_files__a_setuid_file_the_agent_leaves_is_out_of_reach_of_the_hosts_other_users(tmp_path):
    # A work root any user may walk through (pytest's own folders are private to root), so
    # that only the attempt's folder stands in the way.
    shared = Path(tempfile.mkdtemp(prefix="hemra-open-", dir="/tmp"))
    shared.chmod(0o755)
    task, task_dir = make_task(tmp_path)
    box = DockerSandbox(f"t-{uuid.uuid4().hex[:8]}", task, task_dir, shared)
    try:
        await box.prepare()
        made = await box.exec("cp /bin/bash /logs/agent/sh && chmod 4755 /logs/agent/sh && stat -c %a /logs/agent/sh")
        assert made.stdout.decode().strip() == "4755"
        assert box.folder.stat().st_mode & 0o777 == 0o700
        # As any other user of the host (nobody), the path does not lead there.
        reach = subprocess.run(
            ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "stat", box.folder / "logs/agent/sh"],
            capture_output=True,
            text=True,
        )
        assert reach.returncode != 0 and "Permission denied" in reach.stderr, reach
    finally:
        await box.teardown()
        wait_for_removals()
        shutil.rmtree(shared, ignore_errors=True)


async def test_files__symlinks_in_bound_folders_resolve_in_the_container_never_on_the_host(tmp_path):
    secret = tmp_path / "host-secret.txt"
    secret.write_text("host-only canary\n")
    box = await open_box(tmp_path)
    try:
        await box.exec(
            f"ln -s {secret} /logs/agent/leak; ln -s /app/data/input.txt /logs/agent/inside; "
            f"ln -s {tmp_path} /logs/artifacts/dir"
        )
        with pytest.raises(FileNotFoundError):
            await box.read_file("/logs/agent/leak")
        assert await box.read_file("/logs/agent/inside") == b"hello\n"
        with pytest.raises(PermissionError):  # the link leads nowhere in the container
            await box.write_files([("/logs/artifacts/dir/planted", b"x", False)])
        assert not (tmp_path / "planted").exists()
        assert await box.list_files("/logs/agent") == []
    finally:
        await box.teardown()


async def test_fresh__the_agents_workspace_replaces_the_images_as_it_was_left(tmp_path, docker_engine):
    """The verifier's container starts with an empty /app (a volume of its own over the image's,
    no command run to empty it) and gets the agent's /app as plain data: what the agent removed
    from the image stays removed, modes, owners and links are kept, a FIFO is not. The volume
    goes with the container."""
    task, task_dir = make_task(tmp_path)
    box = DockerSandbox(f"t-{uuid.uuid4().hex[:8]}", task, task_dir, tmp_path / "work")
    carry = ["/app", "/logs/agent", "/logs/artifacts"]
    box.reserve_fresh(carry)
    await box.prepare()
    verifier = None
    try:
        await box.exec(
            "rm /app/built.txt && mkdir /app/sub && echo x > /app/sub/f && chmod 700 /app/sub && chmod 751 /app && chown 4321:4321 /app"
            " && chown 1234:2345 /app/sub/f && ln -s /etc/hostname /app/link && mkfifo /app/pipe"
            " && echo note > /logs/agent/n && echo planted > /outside"
        )
        await box.stop_processes()
        verifier = await box.fresh(carry)
        seen = await verifier.exec(
            "stat -c '%a %u:%g %F %n' /app /app/sub /app/sub/f; readlink /app/link; ls -A /app; cat /logs/agent/n;"
            " ls /outside 2>&1 >/dev/null | wc -l"
        )
        assert seen.stdout.decode().splitlines() == [
            "751 4321:4321 directory /app",
            "700 0:0 directory /app/sub",
            "644 1234:2345 regular file /app/sub/f",
            "/etc/hostname",
            "data",
            "link",
            "sub",
            "note",
            "1",
        ]
        mounts = {m["Destination"]: m for m in container(docker_engine, verifier)["Mounts"]}
        volume = mounts["/app"]["Name"]
        assert mounts["/app"]["Type"] == "volume" and docker_engine.api.inspect_volume(volume)
        assert container(docker_engine, verifier)["Config"]["Entrypoint"] == ["sleep", "infinity"]
    finally:
        await box.teardown()
        if verifier is not None:
            await verifier.teardown()
    await asyncio.to_thread(wait_for_removals)
    assert not verifier.folder.exists()
    assert volume not in {v["Name"] for v in docker_engine.api.volumes()["Volumes"] or ()}


async def test_fresh__a_verifier_container_never_used_is_removed_with_the_agents(tmp_path, docker_engine):
    task, task_dir = make_task(tmp_path)
    box = DockerSandbox(f"t-{uuid.uuid4().hex[:8]}", task, task_dir, tmp_path / "work")
    box.reserve_fresh(["/app", "/logs/agent", "/logs/artifacts"])
    await box.prepare()
    spare = await box._spare  # started beside the agent's container
    assert container(docker_engine, spare)["State"]["Running"]
    await box.teardown()  # the attempt ended before its verifier (cancelled, or the harness failed)
    await asyncio.to_thread(wait_for_removals)
    left = docker_engine.api.containers(all=True, filters={"label": f"hemra.attempt={box.attempt_id}-verifier"})
    assert left == [] and not spare.folder.exists()


async def test_mounts__read_only_host_folders(tmp_path):
    tools = tmp_path / "tools"
    tools.mkdir()
    (tools / "tool.sh").write_text("echo tool-ran\n")
    box = await open_box(tmp_path, mounts={"/opt/tools": str(tools)})
    try:
        result = await box.exec("bash /opt/tools/tool.sh; touch /opt/tools/x 2>/dev/null || echo read-only")
        assert result.stdout.decode().split() == ["tool-ran", "read-only"]
        assert not (tools / "x").exists()
    finally:
        await box.teardown()


async def test_exec__stdin_streamed_output_and_exit_codes(tmp_path):
    box = await open_box(tmp_path)
    try:
        seen = []

        async def sink(name, chunk):
            seen.append((name, chunk))

        result = await box.exec("cat; echo err >&2; exit 7", stdin=b"from stdin\n", on_output=sink)
        assert (result.exit_code, result.stdout, result.stderr) == (7, b"from stdin\n", b"err\n")
        assert b"".join(c for n, c in seen if n == "stdout") == b"from stdin\n"
        assert await box.list_files("/tmp") == []  # the stdin file is gone
    finally:
        await box.teardown()


async def test_timeout__kills_the_whole_process_tree_and_the_container_lives_on(tmp_path):
    box = await open_box(tmp_path)
    try:
        started = time.monotonic()
        result = await box.exec("(sleep 2; echo late > /app/late) & setsid sleep 300 & sleep 300", timeout=0.5)
        assert result.timed_out and time.monotonic() - started < 8
        await asyncio.sleep(2.5)
        with pytest.raises(FileNotFoundError):
            await box.read_file("/app/late")
        survivors = await box.exec("for d in /proc/[0-9]*; do tr '\\0' ' ' < $d/cmdline; echo; done")
        assert b"sleep 300" not in survivors.stdout
    finally:
        await box.teardown()


async def test_kill__stops_everything_at_once(tmp_path):
    box = await open_box(tmp_path)
    try:
        running = asyncio.ensure_future(box.exec("sleep 300"))
        await asyncio.sleep(1)
        started = time.monotonic()
        await box.kill()
        result = await asyncio.wait_for(running, 15)
        assert result.exit_code != 0 and time.monotonic() - started < 15
    finally:
        await box.teardown()


async def test_oom__a_command_over_the_memory_limit_is_killed_and_counted(tmp_path):
    box = await open_box(tmp_path, memory_mb=64)
    try:
        assert await box.oom_kills() == 0
        result = await box.exec("python3 -c 'x = bytearray(400 * 1024 * 1024)'")
        assert result.exit_code == 137 and not result.timed_out
        assert await box.oom_kills() >= 1
        alive = await box.exec("echo still-here")  # the container itself survives
        assert alive.stdout == b"still-here\n"
    finally:
        await box.teardown()


async def test_teardown__removes_container_and_folder_twice_safely(tmp_path, docker_engine):
    box = await open_box(tmp_path)
    container_id = box.container_id
    await box.exec("echo x > /logs/agent/x")
    await box.teardown()
    await box.teardown()
    wait_for_removals(30)
    assert docker_engine.api.containers(all=True, filters={"id": container_id}) == []
    assert not box.folder.exists()


def test_orphans__removes_containers_of_dead_executors_only(tmp_path, docker_engine):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    host = socket.gethostname()
    labels = {}
    # An earlier incarnation with this very pid (a restarted container) left one too: an orphan.
    mine = sandbox_cleanup.process_labels()["hemra.instance"]
    parent = os.getppid()
    # A restarted container numbers its processes afresh: a process now running under an
    # earlier executor's pid (here the parent, but started at another time) is not that executor.
    for who, pid, instance, started in (
        ("dead", dead.pid, "", ""),
        ("alive", parent, "", processes.start_time(parent)),
        ("alive, started unknown", parent, "", ""),
        ("reused pid", parent, "", str(int(processes.start_time(parent)) + 1)),
        ("earlier", os.getpid(), "an-earlier-process", processes.start_time(os.getpid())),
        ("mine", os.getpid(), mine, processes.start_time(os.getpid())),
        ("another owner's", dead.pid, "", ""),
        ("before owners", dead.pid, "", ""),  # labelled by an earlier HEMRA: this host's
    ):
        labels[who] = {
            "hemra.attempt": f"orphan-{who}",
            # Several executors share one engine (compose): another's are never swept, dead or not.
            "hemra.owner": "another-executor" if who == "another owner's" else sandbox_cleanup.owner(),
            "hemra.host": "another-host" if who == "another owner's" else host,
            "hemra.pid": str(pid),
            "hemra.started": started,
            "hemra.executor": f"{host}:{pid}",
            "hemra.instance": instance,
        }
        if who == "before owners":
            del labels[who]["hemra.owner"]
    with labelled_containers(docker_engine, labels, start=True) as made:
        sandbox_module.remove_orphans()
        # What is gone, not what this call removed: another executor starting on this host
        # (a test run beside this one) may sweep the same orphans first.
        gone = {
            who
            for who, container_id in made.items()
            if not docker_engine.api.containers(all=True, filters={"id": container_id})
        }
        assert gone == {"dead", "reused pid", "earlier", "before owners"}


def test_remove_own__an_executor_on_its_way_out_removes_its_own_containers_only(docker_engine):
    from hemra.services.executor import sandboxes

    labels = {
        "own": sandbox_cleanup.process_labels(),
        "another executor's": {**sandbox_cleanup.process_labels(), "hemra.instance": "another-process"},
    }
    labels = {who: {"hemra.attempt": f"left-{uuid.uuid4().hex[:6]}", **these} for who, these in labels.items()}
    with labelled_containers(docker_engine, labels) as made:
        removed = sandboxes.remove_own()  # (and any an earlier test's teardown is still removing)
        assert made["own"] in removed and made["another executor's"] not in removed
        assert docker_engine.api.containers(all=True, filters={"id": made["own"]}) == []
        assert docker_engine.api.containers(all=True, filters={"id": made["another executor's"]}) != []


@contextlib.contextmanager
def labelled_containers(docker_engine, labels: dict[str, dict], start: bool = False):
    """A container with each of these labels (name -> labels), as `name -> ID`; removed after."""
    made = {}
    try:
        for who, these in labels.items():
            made[who] = docker_engine.api.create_container(
                "debian:bookworm-slim",
                entrypoint=["sleep", "infinity"],
                labels=these,
                host_config=docker_engine.api.create_host_config(network_mode="none"),
            )["Id"]
            if start:
                docker_engine.api.start(made[who])
        yield made
    finally:
        for container_id in made.values():
            try:
                docker_engine.api.remove_container(container_id, force=True)
            except Exception:  # already removed by the test
                pass


def test_rebase__every_stage_from_an_image_starts_from_the_runs_base():
    from hemra.services.environments.images import rebase

    dockerfile = (
        "FROM debian:bookworm-slim\nWORKDIR /app\n"
        "from --platform=linux/amd64 python:3.12 AS Build\nRUN make\n"
        "FROM build\nCOPY --from=build /out /out\n"
    )
    assert rebase(dockerfile, "hemra-base:bookworm") == (
        "FROM hemra-base:bookworm\nWORKDIR /app\n"
        "from --platform=linux/amd64 hemra-base:bookworm AS Build\nRUN make\n"
        "FROM build\nCOPY --from=build /out /out\n"
    )
