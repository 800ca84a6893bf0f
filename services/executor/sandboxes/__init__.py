"""Where a trial runs. One module per sandbox kind; `open_sandbox` picks by name."""

from services.executor.sandboxes.base import ExecResult, Sandbox, SandboxError


def open_sandbox(kind: str, attempt_id: str, task, task_dir, work_root,
                 mounts: dict[str, str] | None = None) -> Sandbox:
    """A sandbox of `kind` for one attempt (not yet prepared). Vendor SDKs load lazily.

    `mounts` maps sandbox paths to host folders shown read-only inside (e.g. an
    agent CLI installed once in a cached tool folder)."""
    if kind == "host":
        from services.executor.sandboxes.host import HostSandbox

        return HostSandbox(attempt_id, task, task_dir, work_root, mounts)
    raise SandboxError(f"sandbox {kind!r} is not available on this executor")


__all__ = ["ExecResult", "Sandbox", "SandboxError", "open_sandbox"]
