"""The host sandbox run by a user other than root: bwrap's user namespace drops every
capability itself, no uid change is possible, and the rest holds (network, relay, links)."""

import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

SCRIPT = """
import asyncio, json, os, socket, sys
from hemra.v1 import common_pb2 as pb
from hemra.services.executor.sandboxes.host import HostSandbox

async def main(folder, port):
    os.makedirs(f"{folder}/task/environment", exist_ok=True)
    task = pb.Task(task_name="t", environment=pb.Environment(workdir="/app"))
    from pathlib import Path
    sandbox = HostSandbox("a-1", task, Path(folder) / "task", Path(folder) / "work",
                          endpoints=[("127.0.0.1", port)])
    await sandbox.prepare()
    said = {}
    result = await sandbox.exec("id -u; grep -E '^(CapEff|CapBnd):' /proc/self/status | tr -d '\\\\t'; "
                                f"(echo > /dev/tcp/127.0.0.1/{port}) && echo relayed; "
                                "(echo > /dev/tcp/127.0.0.1/1) 2>/dev/null || echo closed; cat /proc/1/environ")
    said["exec"] = result.stdout.decode(errors="replace")
    await sandbox.exec(f"rm -rf /logs/artifacts; ln -s {folder}/host /logs/artifacts")
    said["listed"] = await sandbox.list_files("/logs/artifacts")
    try:
        await sandbox.write_files([("/logs/artifacts/x", b"x", False)])
        said["wrote"] = True
    except PermissionError:
        said["wrote"] = False
    await sandbox.stop_processes()
    await sandbox.teardown()
    print(json.dumps(said))

asyncio.run(main(sys.argv[1], int(sys.argv[2])))
"""


def _user() -> pwd.struct_passwd | None:
    for entry in pwd.getpwall():
        if 1000 <= entry.pw_uid < 60000:
            return entry
    return None


@pytest.mark.skipif(os.geteuid() != 0, reason="becomes another user to run the sandbox as non-root")
def test_the_sandbox_run_by_a_user_keeps_its_guarantees(tmp_path):
    user = _user()
    if user is None or not shutil.which("setpriv"):
        pytest.skip("no unprivileged user (or no setpriv) on this host")
    folder = Path(tempfile.mkdtemp(prefix="hemra-nonroot-"))
    listener = __import__("socket").socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    try:
        (folder / "host").mkdir()
        (folder / "host" / "keep.txt").write_text("keep\n")
        shutil.chown(folder, user.pw_uid, user.pw_gid)
        shutil.chown(folder / "host", user.pw_uid, user.pw_gid)
        done = subprocess.run(
            [
                "setpriv",
                f"--reuid={user.pw_uid}",
                f"--regid={user.pw_gid}",
                "--clear-groups",
                "--",
                sys.executable,
                "-c",
                SCRIPT,
                str(folder),
                str(listener.getsockname()[1]),
            ],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=REPO,
            env={
                "PATH": os.environ["PATH"],
                "HOME": str(folder),
                "HEMRA_CANARY_SECRET": "s3cr3t-canary",
                "PYTHONPATH": os.pathsep.join([str(REPO), str(REPO / "protos")]),
            },
        )
        if done.returncode != 0 and ("Permission denied" in done.stderr or "No permissions" in done.stderr):
            pytest.skip(f"{user.pw_name} cannot run HEMRA or bwrap here: {done.stderr.strip()[-300:]}")
        assert done.returncode == 0, done.stderr
        said = json.loads(done.stdout.strip().splitlines()[-1])
        lines = said["exec"].split("\n")
        assert lines[:5] == [
            str(user.pw_uid),
            "CapEff:0000000000000000",
            "CapBnd:0000000000000000",
            "relayed",
            "closed",
        ], said["exec"]
        assert "s3cr3t-canary" not in said["exec"]  # bwrap's own environment (PID 1) is empty
        assert said["listed"] == [] and said["wrote"] is False
        assert sorted(os.listdir(folder / "host")) == ["keep.txt"]
    finally:
        listener.close()
        shutil.rmtree(folder, ignore_errors=True)
