"""The host sandbox for real: bubblewrap, real bash, private paths, timeouts that kill the tree."""

import asyncio
import os
import time
from pathlib import Path

import pytest

from hemra.services.executor.sandboxes.base import SandboxError, wait_for_removals
from hemra.services.executor.sandboxes.host import HostSandbox
from hemra.v1 import common_pb2 as pb


def make_task(tmp_path: Path, env=None, copies=(), workdir="/app") -> tuple[pb.Task, Path]:
    task_dir = tmp_path / "task"
    (task_dir / "environment" / "data").mkdir(parents=True, exist_ok=True)
    (task_dir / "environment" / "data" / "input.txt").write_text("hello\n")
    (task_dir / "environment" / "notes.md").write_text("notes\n")
    task = pb.Task(
        task_name="t",
        environment=pb.Environment(
            workdir=workdir, env=env or {}, copies=[pb.CopyStep(source=s, destination=d) for s, d in copies]
        ),
    )
    return task, task_dir


async def sandbox_for(tmp_path, name="a-1", reserve: list[str] | None = None, **kwargs) -> HostSandbox:
    task, task_dir = make_task(tmp_path, **kwargs)
    sandbox = HostSandbox(name, task, task_dir, tmp_path / "work")
    if reserve is not None:
        sandbox.reserve_fresh(reserve)
    await sandbox.prepare()
    return sandbox


async def test_environment__workdir_env_and_copies_applied(tmp_path):
    sandbox = await sandbox_for(
        tmp_path, env={"GREETING": "hi there"}, copies=[("data/", "/app/data/"), ("notes.md", "/opt/notes/")]
    )
    result = await sandbox.exec('pwd; echo "$GREETING"; cat data/input.txt; cat /opt/notes/notes.md')
    assert result.stdout.decode().split("\n")[:4] == ["/app", "hi there", "hello", "notes"]
    await sandbox.teardown()


async def test_paths__private_per_attempt_and_never_the_real_app(tmp_path):
    one = await sandbox_for(tmp_path, name="a-1")
    two = await sandbox_for(tmp_path, name="a-2")
    await asyncio.gather(
        one.exec("echo one > /app/mine; mkdir -p /logs/agent; echo x > /logs/agent/log"),
        two.exec("echo two > /app/mine"),
    )
    assert (await one.read_file("/app/mine"), await two.read_file("/app/mine")) == (b"one\n", b"two\n")
    assert not Path("/app/mine").exists()
    seen = await two.exec("ls /logs/agent")
    assert seen.stdout == b""
    await one.teardown()
    await two.teardown()
    wait_for_removals(30)  # teardown removes the folders in the background
    assert not (tmp_path / "work" / "a-1").exists()


async def test_system_folders__read_only(tmp_path):
    sandbox = await sandbox_for(tmp_path)
    result = await sandbox.exec("touch /usr/hemra-test 2>&1; echo $?")
    assert result.stdout.strip().endswith(b"1")
    with pytest.raises(PermissionError):
        await sandbox.write_files([("/etc/evil", b"x", False)])
    with pytest.raises(PermissionError):
        sandbox.host_path("/app/../etc/passwd", for_write=True)
    await sandbox.teardown()


async def test_environment__does_not_leak_host_variables(tmp_path, monkeypatch):
    monkeypatch.setenv("HEMRA_CANARY_SECRET", "s3cr3t-canary")
    sandbox = await sandbox_for(tmp_path)
    result = await sandbox.exec("env")
    assert b"s3cr3t-canary" not in result.stdout and b"PATH=" in result.stdout
    await sandbox.teardown()


async def test_timeout__kills_the_whole_process_tree(tmp_path):
    sandbox = await sandbox_for(tmp_path)
    marker = "/app/late"
    started = time.monotonic()
    result = await sandbox.exec(f"(sleep 2; echo late > {marker}) & setsid sleep 30 & sleep 30", timeout=0.5)
    assert result.timed_out and time.monotonic() - started < 5
    await asyncio.sleep(2.5)
    with pytest.raises(FileNotFoundError):
        await sandbox.read_file(marker)
    await sandbox.teardown()


async def test_kill__stops_running_commands(tmp_path):
    sandbox = await sandbox_for(tmp_path)
    running = asyncio.create_task(sandbox.exec("sleep 30"))
    await asyncio.sleep(0.3)
    await sandbox.kill()
    result = await asyncio.wait_for(running, 5)
    assert result.exit_code != 0
    await sandbox.teardown()


async def test_files__write_read_list_remove(tmp_path):
    sandbox = await sandbox_for(tmp_path)
    await sandbox.write_files(
        [("/tests/test.sh", b"#!/bin/bash\necho ok\n", True), ("/logs/verifier/r.txt", b"1", False)]
    )
    assert (await sandbox.exec("/tests/test.sh")).stdout == b"ok\n"
    assert await sandbox.list_files("/logs/verifier") == ["/logs/verifier/r.txt"]
    await sandbox.remove_path("/logs/verifier")
    assert await sandbox.list_files("/logs/verifier") == []
    assert os.access(tmp_path / "work" / "a-1", os.F_OK)
    await sandbox.teardown()


async def test_exec__streams_output_while_the_command_runs(tmp_path):
    sandbox = await sandbox_for(tmp_path)
    seen: list[tuple[str, bytes, bool]] = []
    marker = sandbox.host_path("/tmp/go", for_write=True)

    async def on_output(name: str, chunk: bytes) -> None:
        seen.append((name, chunk, marker.exists()))
        if name == "stdout":
            marker.write_text("")  # the command waits for this, so it must still be running

    result = await sandbox.exec(
        "echo first; echo oops >&2; while [ ! -e /tmp/go ]; do sleep 0.01; done; echo second",
        timeout=10,
        on_output=on_output,
    )
    assert result.exit_code == 0 and not result.timed_out
    assert b"".join(c for n, c, _ in seen if n == "stdout") == result.stdout == b"first\nsecond\n"
    assert b"".join(c for n, c, _ in seen if n == "stderr") == b"oops\n"
    assert ("stdout", b"first\n", False) in seen  # delivered before the command could finish
    await sandbox.teardown()


async def test_mounts__host_folders_shown_read_only(tmp_path):
    tools = tmp_path / "tools"
    tools.mkdir()
    (tools / "agent.sh").write_text("echo agent ran\n")
    task, task_dir = make_task(tmp_path)
    sandbox = HostSandbox("a-1", task, task_dir, tmp_path / "work", mounts={"/opt/hemra/tools": str(tools)})
    await sandbox.prepare()
    result = await sandbox.exec("bash /opt/hemra/tools/agent.sh; touch /opt/hemra/tools/x || echo refused")
    assert result.stdout.decode().splitlines() == ["agent ran", "refused"]
    assert sorted(p.name for p in tools.iterdir()) == ["agent.sh"]
    await sandbox.teardown()


async def test_timeout__a_new_session_cannot_outlive_it(tmp_path):
    sandbox = await sandbox_for(tmp_path)
    started = time.monotonic()
    result = await sandbox.exec("setsid sleep infinity & exec sleep 1000", timeout=2)
    assert result.timed_out and time.monotonic() - started < 5
    started = time.monotonic()
    result = await sandbox.exec("sleep 20 & exit 0", timeout=10)
    assert not result.timed_out and result.exit_code == 0 and time.monotonic() - started < 2
    await sandbox.teardown()


def _host_processes(word: str) -> list[int]:
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if word.encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                found.append(int(pid))
        except OSError:
            pass
    return found


async def test_stop_processes__kills_what_the_harness_left_and_checks(tmp_path):
    sandbox = await sandbox_for(tmp_path)
    running = asyncio.create_task(sandbox.exec("(setsid sleep 987651 &); exec -a hidden sleep 987652", timeout=60))
    for _ in range(100):
        if len(_host_processes("98765")) >= 2:
            break
        await asyncio.sleep(0.05)
    assert len(_host_processes("98765")) >= 2
    await sandbox.stop_processes()
    assert _host_processes("98765") == []
    assert (await asyncio.wait_for(running, 5)).exit_code != 0
    assert (await sandbox.exec("echo still usable")).stdout == b"still usable\n"
    await sandbox.stop_processes()  # nothing left: at once
    await sandbox.teardown()


async def test_read_file__reads_no_more_than_its_limit(tmp_path):
    sandbox = await sandbox_for(tmp_path)
    await sandbox.exec("echo 0123456789 > /app/small; truncate -s 50G /app/huge; echo inside > /tmp/x")
    assert await sandbox.read_file("/app/small", limit=4) == b"0123"
    assert await sandbox.read_file("small", limit=100) == b"0123456789\n"
    started = time.monotonic()
    assert await sandbox.read_file("/app/huge", limit=3) == b"\0\0\0"
    assert await sandbox.file_size("/app/huge") == 50 * 1024**3 and time.monotonic() - started < 2
    assert await sandbox.file_size("/app/small") == 11
    assert await sandbox.read_file("/etc/hostname", limit=2) == Path("/etc/hostname").read_bytes()[:2]
    assert await sandbox.file_size("/etc/hostname") == Path("/etc/hostname").stat().st_size
    with pytest.raises(FileNotFoundError):
        await sandbox.read_file("/app/absent")
    with pytest.raises(FileNotFoundError):
        await sandbox.file_size("/usr/absent")
    with pytest.raises(IsADirectoryError):
        await sandbox.read_file("/app")
    await sandbox.teardown()


@pytest.mark.parametrize("reserved", [False, True], ids=["made-when-asked", "made-while-the-harness-works"])
async def test_fresh__carries_only_its_folders_as_plain_data(tmp_path, reserved):
    carry = ["/app", "/logs/agent", "/logs/artifacts"]
    sandbox = await sandbox_for(tmp_path, copies=[("data/", "/app/data/")], reserve=carry if reserved else None)
    host = tmp_path / "host"
    host.mkdir()
    (host / "secret.txt").write_text("host\n")
    await sandbox.exec(
        f"echo work > /app/out.txt; mkdir -p /app/sub && echo deep > /app/sub/f; rm /app/data/input.txt; "
        f"ln -s {host} /app/hostlink; ln -s {host}/secret.txt /logs/agent/leaf; mkfifo /app/fifo; "
        f"echo log > /logs/agent/log.txt; echo art > /logs/artifacts/a; echo x > /tmp/x; "
        f"echo rc > /root/.bashrc; chmod 4755 /app/out.txt; echo v > /logs/verifier/old"
    )
    await sandbox.stop_processes()
    started = time.monotonic()
    verifier = await asyncio.wait_for(sandbox.fresh(carry), 10)
    assert time.monotonic() - started < 5
    try:
        assert verifier.folder == tmp_path / "work" / "a-1-verifier"
        assert await verifier.list_files("/app") == ["/app/out.txt", "/app/sub/f"]
        assert await verifier.read_file("/app/out.txt") == b"work\n"
        assert await verifier.read_file("/logs/agent/log.txt") == b"log\n"
        assert await verifier.list_files("/logs/artifacts") == ["/logs/artifacts/a"]
        assert os.readlink(verifier.root / "app" / "hostlink") == str(host)  # a link, kept as one
        assert not os.path.lexists(verifier.root / "app" / "fifo")
        for path in ("/tmp/x", "/root/.bashrc", "/logs/verifier/old", "/app/data/input.txt"):
            with pytest.raises(FileNotFoundError):
                await verifier.read_file(path)
        with pytest.raises(FileNotFoundError):  # the host's file is not where the link points inside
            await verifier.read_file("/app/hostlink/secret.txt")
        with pytest.raises(PermissionError):
            await verifier.write_files([("/logs/agent/leaf", b"x", False)])
        assert (host / "secret.txt").read_text() == "host\n"
        result = await verifier.exec("pwd; cat out.txt; stat -c %a out.txt; touch /app/new /logs/verifier/r && echo w")
        assert result.stdout == b"/app\nwork\n755\nw\n", result.stderr
    finally:
        await verifier.teardown()
        await sandbox.teardown()
    wait_for_removals(30)  # teardown removes the folders in the background
    assert sorted(os.listdir(tmp_path / "work")) == []


async def test_a_reserved_verifier_sandbox_is_made_apart_and_removed_when_never_used(tmp_path):
    """reserve_fresh: the verifier's sandbox is prepared while the harness works, out of the
    harness's reach; an attempt that ends before scoring removes it with its own."""
    sandbox = await sandbox_for(tmp_path, copies=[("data/", "/app/data/")], reserve=["/app"])
    await asyncio.sleep(0.5)  # the spare's preparation runs beside the harness
    spare = tmp_path / "work" / "a-1-verifier" / "root" / "app" / "data" / "input.txt"
    assert spare.read_text() == "hello\n"
    planted = await sandbox.exec("echo planted > /app/data/input.txt && cat /app/data/input.txt")
    assert planted.stdout == b"planted\n" and spare.read_text() == "hello\n"  # the harness's copy, not the spare
    await sandbox.teardown()
    wait_for_removals(30)  # teardown removes the folders in the background
    assert sorted(os.listdir(tmp_path / "work")) == []


async def test_exec__a_command_that_forges_a_bubblewrap_error_gets_its_own_result(tmp_path):
    """Only bwrap's status pipe tells its failures apart: what a command prints is its result."""
    sandbox = await sandbox_for(tmp_path)
    try:
        result = await sandbox.exec("echo 'bwrap: forged' >&2; exit 1")
        assert (result.exit_code, result.stderr, result.timed_out) == (1, b"bwrap: forged\n", False)
    finally:
        await sandbox.teardown()


async def test_exec__a_real_bubblewrap_failure_is_a_sandbox_error(tmp_path):
    sandbox = await sandbox_for(tmp_path)
    sandbox.mounts["/opt/gone"] = str(tmp_path / "no-such-folder")  # bwrap cannot bind it
    try:
        with pytest.raises(SandboxError, match="bubblewrap failed: bwrap: Can't find source path"):
            await sandbox.exec("echo never")
    finally:
        await sandbox.teardown()


async def test_exec__the_command_holds_no_descriptor_of_hemras(tmp_path):
    """bwrap's status pipe and seccomp program are closed before the command runs; nothing
    but its standard streams is open (the 3 is ls's own listing of the folder)."""
    sandbox = await sandbox_for(tmp_path)
    try:
        result = await sandbox.exec("ls /proc/self/fd; for fd in 3 4 5 6 7 8 9 10 11 12; do echo x >&$fd; done")
        assert result.stdout.split() == [b"0", b"1", b"2", b"3"], result.stderr
        assert result.stderr.count(b"Bad file descriptor") == 10
    finally:
        await sandbox.teardown()
