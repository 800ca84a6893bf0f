"""Attempts apart from each other and from the host's kernel: each attempt runs as a uid of
its own, and every command under a seccomp filter that refuses the kernel keyrings, ptrace,
mounts, new namespaces and the like with EPERM, while ordinary work goes on."""

import asyncio
import errno
import os
from pathlib import Path

import pytest

from hemra.services.executor.sandboxes.host import SANDBOX_UID, HostSandbox
from hemra.v1 import common_pb2 as pb

#: Each call's errno (0 when it succeeded), one "name errno" line each.
CALLS = r"""
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
def call(name, fn, *args):
    ctypes.set_errno(0)
    failed = fn(*args) == -1
    print(name, ctypes.get_errno() if failed else 0)
long = ctypes.c_long
call("keyctl", libc.syscall, long(250), long(0), long(-3))  # KEYCTL_GET_KEYRING_ID, session
call("add_key", libc.syscall, long(248), b"user", b"hemra", b"v", long(1), long(-3))
call("mount", libc.mount, b"none", b"/tmp", b"tmpfs", long(0), None)
call("unshare", libc.unshare, 0x10000000 | 0x00020000)  # CLONE_NEWUSER | CLONE_NEWNS
call("ptrace_attach", libc.ptrace, long(16), long(1), None, None)  # PTRACE_ATTACH of PID 1
call("ptrace_traceme", libc.ptrace, long(0), long(0), None, None)
"""


async def host_sandbox(tmp_path: Path, name: str = "a-1") -> HostSandbox:
    (tmp_path / "task" / "environment").mkdir(parents=True, exist_ok=True)
    task = pb.Task(task_name="t", environment=pb.Environment(workdir="/app"))
    sandbox = HostSandbox(name, task, tmp_path / "task", tmp_path / "work")
    await sandbox.prepare()
    return sandbox


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="the syscall numbers above are x86_64's")
async def test_keyrings_mounts_namespaces_and_ptrace_are_refused(tmp_path):
    sandbox = await host_sandbox(tmp_path)
    try:
        await sandbox.write_files([("/tmp/calls.py", CALLS.encode(), False)])
        result = await sandbox.exec("python3 /tmp/calls.py")
        said = dict(line.split() for line in result.stdout.decode().splitlines())
        assert said == {name: str(errno.EPERM) for name in said}, result.stderr
        assert sorted(said) == ["add_key", "keyctl", "mount", "ptrace_attach", "ptrace_traceme", "unshare"]
    finally:
        await sandbox.teardown()


async def test_shell_tools_still_work_under_the_filter(tmp_path):
    sandbox = await host_sandbox(tmp_path)
    try:
        result = await sandbox.exec(
            "set -e; mkdir -p /app/d; echo hi > /app/d/f; ls /app/d; "
            'python3 -c \'import threading, subprocess; t = threading.Thread(target=print, args=("thread",)); '
            't.start(); t.join(); print(subprocess.run(["cat", "/app/d/f"], capture_output=True).stdout.decode())\'; '
            "grep -E '^Seccomp:' /proc/self/status"
        )
        assert result.stdout.decode().split() == ["f", "thread", "hi", "Seccomp:", "2"], result.stderr
    finally:
        await sandbox.teardown()


@pytest.mark.skipif(os.geteuid() != 0, reason="uids are changed only by a sandbox run by root")
async def test_each_attempt_runs_as_a_uid_of_its_own(tmp_path, monkeypatch):
    monkeypatch.delenv("HEMRA_SANDBOX_UID", raising=False)
    one, two = await asyncio.gather(host_sandbox(tmp_path, "a-1"), host_sandbox(tmp_path, "a-2"))
    try:
        uids = [int((await box.exec("id -u; id -g")).stdout.split()[0]) for box in (one, two)]
        assert uids[0] != uids[1]
        assert all(SANDBOX_UID < uid < 2**31 - 1 for uid in uids)
        assert [box.owner for box in (one, two)] == [(uid, uid) for uid in uids]
        # Each one's folders belong to its own uid.
        owner = os.stat(tmp_path / "work" / "a-2" / "root" / "app")
        assert (owner.st_uid, owner.st_gid) == two.owner
    finally:
        await one.teardown()
        await two.teardown()


@pytest.mark.skipif(os.geteuid() != 0, reason="uids are changed only by a sandbox run by root")
async def test_the_verifiers_fresh_sandbox_has_its_own_uid_and_owns_what_was_carried(tmp_path, monkeypatch):
    monkeypatch.delenv("HEMRA_SANDBOX_UID", raising=False)
    sandbox = await host_sandbox(tmp_path)
    verifier = None
    try:
        await sandbox.exec("echo work > /app/out.txt")
        verifier = await sandbox.fresh(["/app"])
        assert verifier.owner != sandbox.owner
        owner = os.stat(verifier.root / "app" / "out.txt")
        assert (owner.st_uid, owner.st_gid) == verifier.owner
        result = await verifier.exec("id -u; echo more >> /app/out.txt && cat /app/out.txt")
        assert result.stdout.decode().split() == [str(verifier.owner[0]), "work", "more"], result.stderr
    finally:
        if verifier is not None:
            await verifier.teardown()
        await sandbox.teardown()
