"""Where a trial runs. One module per sandbox kind; `open_sandbox` picks by name."""

from services.executor.sandboxes.base import ExecResult, Sandbox, SandboxError


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
) -> Sandbox:
    """A sandbox of `kind` for one attempt (not yet prepared). Vendor SDKs load lazily.

    `mounts` maps sandbox paths to host folders shown read-only inside (e.g. an
    agent CLI installed once in a cached tool folder). `network` is the run's
    `[sandbox] network` ("" and "none": no network), for container sandboxes;
    the planner has checked it against `require`. `endpoints` are the (host,
    port) pairs the harness's agent must reach from inside (its model APIs): a
    container without the host's network relays exactly those (see relay.py).
    `image` is the run's `[sandbox] image` (docker only; the planner refuses it elsewhere)."""
    if kind == "host":
        from services.executor.sandboxes.host import HostSandbox

        return HostSandbox(attempt_id, task, task_dir, work_root, mounts, endpoints)
    if kind == "docker":
        from services.executor.sandboxes.docker import DockerSandbox

        return DockerSandbox(attempt_id, task, task_dir, work_root, mounts, network, endpoints, image)
    if kind == "modal":
        from services.executor.sandboxes.modal import ModalSandbox

        return ModalSandbox(attempt_id, task, task_dir, work_root, mounts, network, endpoints=endpoints)
    raise SandboxError(f"sandbox {kind!r} is not available on this executor")


def remove_orphans() -> list[str]:
    """Remove what killed executors of this host left in sandbox engines (their containers)
    and on the host (their model relays' sockets folders)."""
    from services.executor.sandboxes import docker, relay

    relay.remove_orphans()
    return docker.remove_orphans()


__all__ = ["ExecResult", "Sandbox", "SandboxError", "open_sandbox", "remove_orphans"]
