"""Where a trial runs. One module per sandbox kind; `open_sandbox` picks by name."""

import asyncio
import os
import shutil
import sys
from pathlib import Path

from hemra.services.executor.sandboxes.base import ExecResult, Sandbox, SandboxError, wait_for_removals


def open_sandbox(
    kind: str,
    attempt_id: str,
    task,
    task_dir,
    work_root,
    mounts: dict[str, str] | None = None,
    network: str = "",
    endpoints: list[tuple[str, int]] | None = None,
    image: str = "",
    keep_history: bool = False,
    verifier_network: str = "",
) -> Sandbox:
    """A sandbox of `kind` for one attempt (not yet prepared). Vendor SDKs load lazily.

    `mounts` maps sandbox paths to host folders shown read-only inside (e.g. an
    agent CLI installed once in a cached tool folder). `network` is the run's
    `[sandbox] network` ("" and "none": no network), for container sandboxes;
    the planner has checked it against `require`. `endpoints` are the (host,
    port) pairs the harness's agent must reach from inside (its model APIs): a
    container without the host's network relays exactly those (see relay.py).
    `image` is the run's `[sandbox] image` (docker only; the planner refuses it elsewhere).
    `keep_history`: the run keeps the task's history (allow_history): its container sandbox
    runs the environment's image without HEMRA's history layer (services/environments/history.py).
    `verifier_network` is the verifier's network ("" and "none": none; "bridge": a network of
    the attempt's own, docker only; the planner refuses it elsewhere)."""
    if verifier_network not in ("", "none") and kind != "docker":
        raise SandboxError(
            f"verifier.network = {verifier_network!r}: the {kind} sandbox cannot give a verifier a network"
        )
    if kind == "host":
        from hemra.services.executor.sandboxes.host import HostSandbox

        return HostSandbox(attempt_id, task, task_dir, work_root, mounts, endpoints)
    if kind == "docker":
        from hemra.services.executor.sandboxes.docker import DockerSandbox

        return DockerSandbox(
            attempt_id,
            task,
            task_dir,
            work_root,
            mounts,
            network,
            endpoints,
            image,
            keep_history=keep_history,
            verifier_network=verifier_network,
        )
    if kind == "modal":
        from hemra.services.executor.sandboxes.modal import ModalSandbox

        return ModalSandbox(
            attempt_id, task, task_dir, work_root, mounts, network, endpoints=endpoints, keep_history=keep_history
        )
    raise SandboxError(f"sandbox {kind!r} is not available on this executor")


#: The sandbox kinds an executor can be told to need (`--sandbox`).
KINDS = ("host", "docker", "modal")


async def backend_state(kind: str) -> str:
    """ "" when the backend of sandbox `kind` answers, else why not: an executor says
    SERVING only once the backend it is deployed for can run trials."""
    if kind == "host":
        return "" if shutil.which("bwrap") else "the host sandbox needs bubblewrap (bwrap), which is not installed"
    if kind == "docker":
        from hemra.services.environments import engine

        try:
            await asyncio.to_thread(lambda: engine.client().ping())
        except Exception as exc:  # the SDK's errors vary by transport; any is "not yet"
            return f"the Docker engine does not answer: {exc}"
        return ""
    if kind == "modal":
        has_env = os.environ.get("MODAL_TOKEN_ID") and os.environ.get("MODAL_TOKEN_SECRET")
        has_file = (Path.home() / ".modal.toml").is_file()
        missing = "no Modal credentials (MODAL_TOKEN_ID and MODAL_TOKEN_SECRET, or ~/.modal.toml)"
        return "" if has_env or has_file else missing
    return f"unknown sandbox {kind!r}"


def remove_orphans() -> list[str]:
    """Remove what killed executors of this host left in sandbox engines (their containers)
    and on the host (their model relays' sockets folders)."""
    from hemra.services.executor.sandboxes import relay

    relay.remove_orphans()
    if not docker_configured():
        return []  # and the engine's SDK (0.1 s) is not even loaded
    from hemra.services.executor.sandboxes import docker

    return docker.remove_orphans()


def remove_own() -> list[str]:
    """Remove what this process's attempts left in sandbox engines, once they are over, and
    wait for every background removal: an executor calls it on its way out."""
    removed = []
    if "hemra.services.executor.sandboxes.docker" in sys.modules:  # else it never made a container
        removed = sys.modules["hemra.services.executor.sandboxes.docker"].remove_own()
    wait_for_removals()
    return removed


def docker_configured() -> bool:
    """Whether a Docker engine may be here at all: DOCKER_HOST, or the local socket."""
    return bool(os.environ.get("DOCKER_HOST")) or Path("/var/run/docker.sock").exists()


__all__ = [
    "KINDS",
    "ExecResult",
    "Sandbox",
    "SandboxError",
    "backend_state",
    "open_sandbox",
    "remove_orphans",
    "remove_own",
]
