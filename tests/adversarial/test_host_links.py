"""Attack 2: HEMRA follows the links the agent plants, and reads the host's system paths.
Whatever HEMRA opens on the agent's behalf is walked inside the attempt's folder without
following links; other paths are read inside the sandbox, as the sandbox's user."""

import asyncio
import os
import time
from pathlib import Path

import pytest

from hemra.services.executor.sandboxes import safefs
from hemra.services.executor.sandboxes.host import HostSandbox
from hemra.v1 import common_pb2 as pb


async def host_sandbox(tmp_path: Path, **kwargs) -> HostSandbox:
    (tmp_path / "task" / "environment").mkdir(parents=True, exist_ok=True)
    task = pb.Task(task_name="t", environment=pb.Environment(workdir="/app"))
    sandbox = HostSandbox("a-1", task, tmp_path / "task", tmp_path / "work", **kwargs)
    await sandbox.prepare()
    return sandbox


def host_folder(tmp_path: Path) -> Path:
    """A folder of the host's with a root-only file, that no sandbox shows."""
    folder = tmp_path / "host"
    folder.mkdir(mode=0o700)
    (folder / "secret.txt").write_text("host-secret\n")
    (folder / "secret.txt").chmod(0o600)
    return folder


def untouched(folder: Path) -> bool:
    return (
        sorted(p.name for p in folder.iterdir()) == ["secret.txt"]
        and (folder / "secret.txt").read_text() == "host-secret\n"
    )


async def test_artifacts_swapped_for_a_link_to_etc_collect_nothing(tmp_path):
    sandbox = await host_sandbox(tmp_path)
    try:
        await sandbox.exec("rm -rf /logs/artifacts && ln -s /etc /logs/artifacts")
        assert await sandbox.list_files("/logs/artifacts") == []
        # Read through the link, it is the sandbox's /etc, with the sandbox user's rights.
        with pytest.raises(PermissionError):
            await sandbox.read_file("/logs/artifacts/shadow")
    finally:
        await sandbox.teardown()


async def test_a_link_to_a_host_folder_is_never_read_listed_written_or_emptied(tmp_path):
    host = host_folder(tmp_path)
    sandbox = await host_sandbox(tmp_path)
    try:
        await sandbox.exec(
            f"rm -rf /logs/agent /logs/verifier && ln -s {host} /logs/agent && "
            f"ln -s {host} /logs/verifier && ln -s {host}/secret.txt /app/leaf.txt"
        )
        assert await sandbox.list_files("/logs/agent") == []
        for path in ("/logs/agent/secret.txt", "/app/leaf.txt"):
            with pytest.raises(FileNotFoundError):  # the host path does not exist inside
                await sandbox.read_file(path)
        for path in ("/logs/agent/acp.jsonl", "/logs/agent/secret.txt", "/app/leaf.txt"):
            with pytest.raises(PermissionError):
                await sandbox.write_files([(path, b"written by HEMRA", False)])
        with pytest.raises(PermissionError):
            await sandbox.remove_path("/logs/verifier/secret.txt")
        await sandbox.remove_path("/logs/verifier")  # the link goes, not what it points to
        await sandbox.remove_path("/app/leaf.txt")
        assert untouched(host)
        assert not os.path.lexists(tmp_path / "work" / "a-1" / "root" / "logs" / "verifier")
    finally:
        await sandbox.teardown()
    assert untouched(host)


async def test_system_paths_are_the_sandboxs_not_the_hosts(tmp_path, monkeypatch):
    monkeypatch.setenv("HEMRA_CANARY_SECRET", "s3cr3t-canary")
    host = host_folder(tmp_path)
    sandbox = await host_sandbox(tmp_path)
    try:
        for path in (f"/proc/self/root{host}/secret.txt", f"/proc/1/root{host}/secret.txt", "/etc/shadow"):
            with pytest.raises((FileNotFoundError, PermissionError)):
                await sandbox.read_file(path)
        environ = await sandbox.read_file("/proc/self/environ")
        assert b"PATH=" in environ and b"s3cr3t-canary" not in environ
        inside = await sandbox.exec("cat /proc/1/environ /proc/self/environ; cat /proc/1/cmdline")
        assert b"s3cr3t-canary" not in inside.stdout
        assert b"root:" in await sandbox.read_file("/etc/passwd")  # world-readable, read as the sandbox's user
        assert await sandbox.list_files(f"/proc/self/root{host}") == []
        with pytest.raises(PermissionError):
            await sandbox.write_files([("/proc/self/root/tmp/x", b"x", False)])
    finally:
        await sandbox.teardown()
    assert untouched(host)


async def test_fifos_and_sockets_never_block_and_are_not_files(tmp_path):
    sandbox = await host_sandbox(tmp_path)
    try:
        await sandbox.exec(
            "mkfifo /logs/artifacts/fifo /app/fifo && echo ok > /logs/artifacts/real.txt && "
            "python3 -c 'import socket; socket.socket(socket.AF_UNIX).bind(\"/logs/artifacts/sock\")'"
        )
        started = time.monotonic()
        assert await sandbox.list_files("/logs/artifacts") == ["/logs/artifacts/real.txt"]
        for path in ("/logs/artifacts/fifo", "/logs/artifacts/sock"):
            with pytest.raises(FileNotFoundError):
                await sandbox.read_file(path)
            with pytest.raises(FileNotFoundError):
                await sandbox.file_size(path)
        with pytest.raises(PermissionError):
            await sandbox.write_files([("/app/fifo", b"x", False)])
        assert time.monotonic() - started < 5
    finally:
        await sandbox.teardown()


async def test_a_folder_swapped_for_a_link_while_hemra_works_never_leads_out(tmp_path):
    """The agent swaps a folder for a link to the host as fast as it can while HEMRA writes,
    reads and removes inside it: HEMRA either works in the real folder or refuses."""
    host = host_folder(tmp_path)
    sandbox = await host_sandbox(tmp_path)
    swapper = asyncio.create_task(
        sandbox.exec(
            f"mkdir -p /app/d; end=$((SECONDS + 4)); while [ $SECONDS -lt $end ]; do mv /app/d /app/real; "
            f"ln -s {host} /app/d; rm /app/d; mv /app/real /app/d; done",
            timeout=60,
        )
    )
    try:
        while not swapper.done():
            for call in (
                sandbox.write_files([("/app/d/secret.txt", b"written by HEMRA", False)]),
                sandbox.read_file("/app/d/secret.txt"),
                sandbox.list_files("/app/d"),
                sandbox.remove_path("/app/d/secret.txt"),
            ):
                try:
                    result = await call
                except (FileNotFoundError, PermissionError, NotADirectoryError):
                    continue
                assert b"host-secret" not in (result if isinstance(result, bytes) else b"")
            assert untouched(host)
        assert (await swapper).exit_code == 0
    finally:
        swapper.cancel()
        await sandbox.teardown()
    assert untouched(host)


def test_safefs_refuses_links_in_any_component(tmp_path):
    root = tmp_path / "root"
    (root / "a").mkdir(parents=True)
    host = host_folder(tmp_path)
    (root / "a" / "up").symlink_to(host)
    (root / "leaf").symlink_to(host / "secret.txt")
    for call in (
        lambda: safefs.read(root, "a/up/secret.txt"),
        lambda: safefs.read(root, "leaf"),
        lambda: safefs.size(root, "leaf"),
        lambda: safefs.write(root, "a/up/new", b"x"),
        lambda: safefs.write(root, "leaf", b"x"),
        lambda: safefs.remove(root, "a/up/secret.txt"),
        lambda: safefs.make_folders(root, "a/up/x"),
    ):
        with pytest.raises(safefs.LinkRefused):
            call()
    with pytest.raises(PermissionError):
        safefs.read(root, "a/../../host/secret.txt")
    assert safefs.walk(root, "") == [] and safefs.walk(root, "a/up") == []
    safefs.copy_tree(root, "a", root, "b")
    assert os.readlink(root / "b" / "up") == str(host)
    safefs.remove(root, "a")
    safefs.remove(root, "leaf")
    assert untouched(host) and sorted(os.listdir(root)) == ["b"]
