"""The Modal sandbox: what it asks Modal for is built from the task offline; the real path
runs only with a Modal token, and nothing contacts Modal without one."""

import uuid

import pytest
from google.protobuf.duration_pb2 import Duration

from hemra.services.environments import history
from hemra.services.executor.sandboxes import SandboxError, open_sandbox
from hemra.services.executor.sandboxes import modal as modal_sandbox
from hemra.services.planner import plan
from hemra.v1 import common_pb2 as pb
from tests.e2e.helpers import BUNDLED


def bundled(name: str) -> tuple[pb.Task, object]:
    task = pb.Task(
        task_name=f"hemra/{name}",
        digest="sha256:" + "ab" * 32,
        agent_timeout=Duration(seconds=120),
        verifier_timeout=Duration(seconds=60),
        environment=pb.Environment(workdir="/app", env={"GREETING_NAME": "world"}, cpus=1, memory_mb=512),
    )
    return task, BUNDLED / name


def test_specs__built_from_the_task(tmp_path):
    task, folder = bundled("env-greeting")
    image = modal_sandbox.image_spec(task, folder, {"/opt/tools": str(tmp_path)})
    assert image == modal_sandbox.ImageSpec(
        dockerfile=str(folder / "environment" / "Dockerfile"),
        context_dir=str(folder / "environment"),
        local_dirs=[(str(tmp_path), "/opt/tools")],
        layers=["USER 0", history.run_line()],  # HEMRA's history layer on the task's image
    )
    kept = modal_sandbox.image_spec(task, folder, keep_history=True)  # the run keeps its history
    assert kept.layers == [] and kept.dockerfile == image.dockerfile
    task.environment.base_commit = "0123abc"
    assert modal_sandbox.image_spec(task, folder).layers[1] == history.run_line("/app", "0123abc")
    spec = modal_sandbox.sandbox_spec(task, "a-1")
    assert (spec.cpu, spec.memory, spec.workdir, spec.env, spec.block_network) == (
        1.0,
        512,
        "/app",
        {"GREETING_NAME": "world"},
        True,
    )
    assert spec.command == ["sleep", "infinity"]
    assert spec.timeout == 120 + 60 + modal_sandbox.LIFETIME_MARGIN_SECS
    assert spec.tags["hemra.attempt"] == "a-1" and spec.tags["hemra.task"] == task.digest
    assert modal_sandbox.sandbox_spec(task, "a-1", lifetime_secs=10**6).timeout == modal_sandbox.MAX_LIFETIME_SECS
    assert modal_sandbox.sandbox_spec(task, "a-1", network="none").block_network is True
    assert modal_sandbox.sandbox_spec(task, "a-1", network="open").block_network is False


def test_specs__prebuilt_image_and_unlimited_task(tmp_path):
    task = pb.Task(task_name="t", environment=pb.Environment(base_image="python:3.12-slim"))
    assert modal_sandbox.image_spec(task, tmp_path).registry_image == "python:3.12-slim"
    spec = modal_sandbox.sandbox_spec(task, "a-2")
    assert (spec.cpu, spec.memory, spec.workdir) == (None, None, "/")
    assert spec.timeout == modal_sandbox.DEFAULT_AGENT_SECS + modal_sandbox.LIFETIME_MARGIN_SECS
    with pytest.raises(SandboxError, match="neither environment/Dockerfile nor docker_image"):
        modal_sandbox.image_spec(pb.Task(task_name="t"), tmp_path)


def test_to_modal__lazy_sdk_image_from_the_dockerfile(tmp_path):
    modal = pytest.importorskip("modal", reason="the modal extra is not installed (pip install 'hemra[modal]')")
    task, folder = bundled("csv-column-sum")
    image = modal_sandbox.to_modal(modal_sandbox.image_spec(task, folder, {"/opt/tools": str(tmp_path)}), modal)
    assert isinstance(image, modal.Image)


async def test_prepare__refused_without_credentials_and_nothing_contacted(tmp_path, monkeypatch):
    for name in modal_sandbox.CREDENTIALS:
        monkeypatch.delenv(name, raising=False)
    task, folder = bundled("reverse-lines")
    box = open_sandbox("modal", "a-3", task, folder, tmp_path)
    with pytest.raises(SandboxError, match="needs MODAL_TOKEN_ID and MODAL_TOKEN_SECRET"):
        await box.prepare()
    await box.teardown()


def test_enforces__one_table_for_the_planner_and_the_sandboxes():
    from hemra.services.executor.sandboxes.docker import DockerSandbox
    from hemra.services.executor.sandboxes.host import HostSandbox

    assert plan.SANDBOXES["modal"] == modal_sandbox.ModalSandbox.enforces
    assert plan.SANDBOXES["docker"] == DockerSandbox.enforces and "network_block" in DockerSandbox.enforces
    assert plan.SANDBOXES["host"] == HostSandbox.enforces and "network_block" in HostSandbox.enforces


@pytest.mark.skipif(
    bool(modal_sandbox.credentials_missing()),
    reason="needs a Modal account: MODAL_TOKEN_ID and MODAL_TOKEN_SECRET are not set",
)
async def test_real_modal__runs_a_command_reads_files_and_blocks_the_network(tmp_path):
    task, folder = bundled("env-greeting")
    box = open_sandbox("modal", f"test-{uuid.uuid4().hex[:8]}", task, folder, tmp_path)
    await box.prepare()
    try:
        result = await box.exec('echo "$GREETING_NAME" > /logs/agent/out.txt; pwd', timeout=60)
        assert result.stdout == b"/app\n" and result.exit_code == 0
        assert await box.read_file("/logs/agent/out.txt") == b"world\n"
        assert await box.list_files("/logs/agent") == ["/logs/agent/out.txt"]
        await box.write_files([("/tests/t.sh", b"#!/bin/bash\necho ok\n", True)])
        assert (await box.exec("/tests/t.sh")).stdout == b"ok\n"
        slow = await box.exec("sleep 60", timeout=2)
        assert slow.timed_out
    finally:
        await box.teardown()
