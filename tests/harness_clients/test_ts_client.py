"""The TypeScript client (clients/harness-ts) against the executor's real HarnessService.

A real gRPC server on 127.0.0.1 serves the protocol over a real host sandbox;
`node --test` runs the package's own tests against it with a harness token.
"""

import asyncio
import os
import shutil
import subprocess
import time

from hemra.services.common import transport
from hemra.services.executor.protocol import Grant, Grants, HarnessServicer
from hemra.services.executor.sandboxes.host import HostSandbox
from hemra.v1 import common_pb2 as pb
from hemra.v1 import harness_service_pb2 as hpb
from hemra.v1 import harness_service_pb2_grpc as hpb_grpc


async def _serve(tmp_path):
    task = pb.Task(
        task_name="hemra/ts-client", instruction="Exercise every call.\n", environment=pb.Environment(workdir="/app")
    )
    (tmp_path / "task" / "environment").mkdir(parents=True)
    sandbox = HostSandbox("attempt-ts", task, tmp_path / "task", tmp_path / "work")
    await sandbox.prepare()
    grants = Grants()
    # No event log: this grant, like a verifier's, takes no events (the client must see FAILED_PRECONDITION).
    grant = Grant(
        attempt_id="attempt-ts",
        phase="harness",
        sandbox=sandbox,
        task=task,
        model="scripted-model",
        deadline=time.monotonic() + 300,
    )
    token = grants.issue(grant)
    server = transport.new_server()
    port = transport.bind(server, "127.0.0.1:0")
    hpb_grpc.add_HarnessServiceServicer_to_server(HarnessServicer(grants), server)
    await server.start()
    return server, f"127.0.0.1:{port}", token, grant, sandbox, grants


async def test_every_call_against_the_real_service(tmp_path, ts_client):
    server, address, token, grant, sandbox, grants = await _serve(tmp_path)
    try:
        env = {**os.environ, "HEMRA_TEST_HARNESS_ADDRESS": address, "HEMRA_TEST_HARNESS_TOKEN": token}
        process = await asyncio.create_subprocess_exec(
            shutil.which("node"),
            "--test",
            "dist/test/",
            cwd=ts_client,
            env=env,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        output = (await asyncio.wait_for(process.communicate(), 120))[0].decode()
        assert process.returncode == 0, output[-6000:]
        assert "# skipped 0" in output and "# fail 0" in output, output[-2000:]
        assert grant.finish is not None
        assert (grant.finish.status, grant.finish.message, grant.finish.agent_version) == (
            hpb.FINISH_STATUS_FAILED,
            "gave up",
            "9.9.9",
        )
        assert await sandbox.read_file("/app/out/run.sh") == b"#!/bin/sh\necho ran\n"
        assert (await sandbox.exec("stat -c %a /app/out/run.sh /app/data.bin")).stdout == b"755\n644\n"
        assert await sandbox.list_files("/app/gone") == []
    finally:
        await server.stop(None)
        await sandbox.teardown()


async def test_a_revoked_token_is_refused(tmp_path, ts_client):
    """The harness's token stops working when its phase ends."""
    server, address, token, grant, sandbox, grants = await _serve(tmp_path)
    try:
        script = (
            "import { HarnessClient, UnauthenticatedError } from 'hemra-harness';"
            "const c = HarnessClient.fromEnv();"
            "console.log((await c.getTrial()).taskName);"
            "await new Promise((r) => process.stdin.once('data', r)); process.stdin.destroy();"
            "try { await c.runCommand('true'); } catch (e) { console.log(e.name, e instanceof UnauthenticatedError); }"
            "c.close();"
        )
        env = {**os.environ, "HEMRA_HARNESS_ADDRESS": address, "HEMRA_HARNESS_TOKEN": token}
        process = await asyncio.create_subprocess_exec(
            shutil.which("node"),
            "--input-type=module",
            "-e",
            script,
            cwd=ts_client,
            env=env,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        assert (await asyncio.wait_for(process.stdout.readline(), 30)) == b"hemra/ts-client\n"
        grants.revoke(token)
        out, err = await asyncio.wait_for(process.communicate(b"go\n"), 30)
        assert out.decode() == "UnauthenticatedError true\n", err.decode()
    finally:
        await server.stop(None)
        await sandbox.teardown()


def test_proto_copies_match_the_repository(tmp_path, ts_client):
    """The drift check fails when a shipped copy differs from protos/, and the copy script fixes it."""
    copy = tmp_path / "clients" / "harness-ts"
    shutil.copytree(ts_client / "scripts", copy / "scripts")
    shutil.copytree(ts_client / "proto", copy / "proto")
    shutil.copytree(ts_client.parents[1] / "protos", tmp_path / "protos")
    check = ["node", "scripts/copy-protos.mjs", "--check"]
    assert subprocess.run(check, cwd=copy, capture_output=True).returncode == 0
    (tmp_path / "protos" / "hemra" / "v1" / "harness_service.proto").write_text("// changed\n", encoding="utf-8")
    drifted = subprocess.run(check, cwd=copy, capture_output=True, text=True)
    assert drifted.returncode == 1
    assert "proto/hemra/v1/harness_service.proto differ from protos/" in drifted.stderr
    assert subprocess.run(["node", "scripts/copy-protos.mjs"], cwd=copy).returncode == 0
    assert subprocess.run(check, cwd=copy).returncode == 0
