"""The host sandbox for real: bubblewrap, real bash, private paths, timeouts that kill the tree."""

import asyncio
import os
import time
from pathlib import Path

import pytest

from hemra.v1 import common_pb2 as pb
from services.executor.sandboxes.host import HostSandbox


def make_task(tmp_path: Path, env=None, copies=(), workdir="/app") -> tuple[pb.Task, Path]:
    task_dir = tmp_path / "task"
    (task_dir / "environment" / "data").mkdir(parents=True, exist_ok=True)
    (task_dir / "environment" / "data" / "input.txt").write_text("hello\n")
    (task_dir / "environment" / "notes.md").write_text("notes\n")
    task = pb.Task(task_name="t", environment=pb.Environment(
        workdir=workdir, env=env or {}, copies=[pb.CopyStep(source=s, destination=d) for s, d in copies]))
    return task, task_dir


async def sandbox_for(tmp_path, name="a-1", **kwargs) -> HostSandbox:
    task, task_dir = make_task(tmp_path, **kwargs)
    sandbox = HostSandbox(name, task, task_dir, tmp_path / "work")
    await sandbox.prepare()
    return sandbox


async def test_environment__workdir_env_and_copies_applied(tmp_path):
    sandbox = await sandbox_for(tmp_path, env={"GREETING": "hi there"},
                                copies=[("data/", "/app/data/"), ("notes.md", "/opt/notes/")])
    result = await sandbox.exec('pwd; echo "$GREETING"; cat data/input.txt; cat /opt/notes/notes.md')
    assert result.stdout.decode().split("\n")[:4] == ["/app", "hi there", "hello", "notes"]
    await sandbox.teardown()


async def test_paths__private_per_attempt_and_never_the_real_app(tmp_path):
    one = await sandbox_for(tmp_path, name="a-1")
    two = await sandbox_for(tmp_path, name="a-2")
    await asyncio.gather(one.exec("echo one > /app/mine; mkdir -p /logs/agent; echo x > /logs/agent/log"),
                         two.exec("echo two > /app/mine"))
    assert (await one.read_file("/app/mine"), await two.read_file("/app/mine")) == (b"one\n", b"two\n")
    assert not Path("/app/mine").exists()
    seen = await two.exec("ls /logs/agent")
    assert seen.stdout == b""
    await one.teardown()
    await two.teardown()
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
    await sandbox.write_files([("/tests/test.sh", b"#!/bin/bash\necho ok\n", True), ("/logs/verifier/r.txt", b"1", False)])
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

    result = await sandbox.exec("echo first; echo oops >&2; while [ ! -e /tmp/go ]; do sleep 0.01; done; echo second",
                                timeout=10, on_output=on_output)
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
