"""Attack 1: bwrap run by root keeps every capability inside. The agent must not be root
in any sense that reaches the host: no capability, an empty bounding set, no_new_privs,
another uid; so no remount of /usr, no write to it, no read of the host's 0600 files
(not even bound in, not even by file handle)."""

import ctypes
import os
import struct
import uuid
from pathlib import Path

import pytest

from hemra.services.executor.sandboxes.host import HostSandbox
from hemra.v1 import common_pb2 as pb

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="the attacks of a sandbox run by root")


async def host_sandbox(tmp_path: Path, **kwargs) -> HostSandbox:
    (tmp_path / "task" / "environment").mkdir(parents=True, exist_ok=True)
    task = pb.Task(task_name="t", environment=pb.Environment(workdir="/app"))
    sandbox = HostSandbox("a-1", task, tmp_path / "task", tmp_path / "work", **kwargs)
    await sandbox.prepare()
    return sandbox


def host_secret(tmp_path: Path) -> Path:
    folder = tmp_path / "host-secret"
    folder.mkdir(mode=0o700)
    secret = folder / "secret.txt"
    secret.write_text("host-secret-0600\n")
    secret.chmod(0o600)
    return secret


async def test_no_capability_no_root_no_new_privileges(tmp_path):
    sandbox = await host_sandbox(tmp_path)
    try:
        result = await sandbox.exec("id -u; grep -E '^(CapEff|CapPrm|CapBnd|CapAmb|NoNewPrivs):' /proc/self/status")
        lines = result.stdout.decode().split()
        assert lines[0] != "0"
        status = dict(zip(lines[1::2], lines[2::2]))
        assert status == {
            "CapEff:": "0000000000000000",
            "CapPrm:": "0000000000000000",
            "CapBnd:": "0000000000000000",
            "CapAmb:": "0000000000000000",
            "NoNewPrivs:": "1",
        }
        # The verifier's commands are the same exec: checked once more with another environment.
        again = await sandbox.exec("grep CapEff /proc/self/status", cwd="/tests", env={"X": "1"})
        assert again.stdout.split()[-1] == b"0000000000000000"
    finally:
        await sandbox.teardown()


async def test_remount_of_usr_fails_and_the_hosts_usr_stays_untouched(tmp_path):
    sandbox = await host_sandbox(tmp_path)
    name = f"hemra-escape-{uuid.uuid4().hex[:8]}"
    try:
        result = await sandbox.exec(
            f"mount -o remount,rw,bind /usr && touch /usr/local/{name}; touch /usr/local/{name}-2; echo done"
        )
        assert result.stdout == b"done\n"
        assert not Path(f"/usr/local/{name}").exists() and not Path(f"/usr/local/{name}-2").exists()
    finally:
        for leftover in (f"/usr/local/{name}", f"/usr/local/{name}-2"):
            Path(leftover).unlink(missing_ok=True)
        await sandbox.teardown()


async def test_root_only_host_file_bound_in_is_unreadable(tmp_path):
    secret = host_secret(tmp_path)
    sandbox = await host_sandbox(tmp_path, mounts={"/opt/secret": str(secret.parent)})
    try:
        result = await sandbox.exec("cat /opt/secret/secret.txt; cat /proc/1/root/opt/secret/secret.txt")
        assert b"host-secret" not in result.stdout
        with pytest.raises(PermissionError):
            await sandbox.read_file("/opt/secret/secret.txt")
    finally:
        await sandbox.teardown()


_OPEN_BY_HANDLE = """
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
kind, handle = int(sys.argv[1]), bytes.fromhex(sys.argv[2])
buf = ctypes.create_string_buffer(len(handle).to_bytes(4, "little") + kind.to_bytes(4, "little", signed=True) + handle)
fd = libc.open_by_handle_at(os.open("/usr", os.O_RDONLY), buf, os.O_RDONLY)
print(os.read(fd, 100).decode() if fd >= 0 else f"errno {ctypes.get_errno()}")
"""


async def test_open_by_handle_at_cannot_read_a_host_file(tmp_path):
    """A file handle names any file of a filesystem the sandbox shows a folder of (here /usr's):
    only CAP_DAC_READ_SEARCH may open one."""
    secret = host_secret(tmp_path)
    libc = ctypes.CDLL(None, use_errno=True)
    buf = ctypes.create_string_buffer(8 + 128)
    struct.pack_into("I", buf, 0, 128)
    mount_id = ctypes.c_int()
    if libc.name_to_handle_at(-100, str(secret).encode(), buf, ctypes.byref(mount_id), 0) != 0:
        pytest.skip(f"this filesystem gives no file handles (errno {ctypes.get_errno()})")
    if os.stat(secret).st_dev != os.stat("/usr").st_dev:
        pytest.skip("the temporary folder is not on /usr's filesystem")
    size, kind = struct.unpack_from("Ii", buf, 0)
    sandbox = await host_sandbox(tmp_path)
    try:
        (tmp_path / "work" / "a-1" / "root" / "tmp" / "h.py").write_text(_OPEN_BY_HANDLE)
        result = await sandbox.exec(f"python3 /tmp/h.py {kind} {buf.raw[8 : 8 + size].hex()}")
        assert b"host-secret" not in result.stdout
        assert result.stdout.startswith(b"errno ")
    finally:
        await sandbox.teardown()


async def test_the_attempts_folders_belong_to_the_sandbox_user(tmp_path):
    sandbox = await host_sandbox(tmp_path)
    try:
        await sandbox.write_files([("/tmp/hemra-acp/in/00000001", b"{}\n", False), ("/app/run.sh", b"echo ok\n", True)])
        result = await sandbox.exec(
            "set -e; for d in /app /logs/agent /logs/verifier /logs/artifacts /tests /solution /tmp /root; do "
            "touch $d/w; done; rm /tmp/hemra-acp/in/00000001; echo x >> /app/run.sh; mkdir /tmp/hemra-acp/out; "
            "echo ok"
        )
        assert result.stdout == b"ok\n", result.stderr
        owner = os.stat(tmp_path / "work" / "a-1" / "root" / "app" / "run.sh")
        assert (owner.st_uid, owner.st_gid) == sandbox.owner
        assert (await sandbox.exec("whoami; echo $HOME")).stdout == b"hemra\n/root\n"
    finally:
        await sandbox.teardown()


async def test_the_sandbox_user_can_be_chosen(tmp_path, monkeypatch):
    monkeypatch.setenv("HEMRA_SANDBOX_UID", "1999999123")
    sandbox = await host_sandbox(tmp_path)
    try:
        assert (await sandbox.exec("id -u")).stdout == b"1999999123\n"
    finally:
        await sandbox.teardown()
