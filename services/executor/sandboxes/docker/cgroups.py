"""A container's cgroup, read and killed through the kernel: no engine call on the way."""

import logging
from pathlib import Path

logger = logging.getLogger(__name__)


def of(pid: int) -> Path | None:
    """The unified-hierarchy cgroup folder of a container's init process, when this host
    exposes one with cgroup.kill (Linux 5.14+; on cgroup v1 hosts too, as a hybrid mount)."""
    if pid <= 0:
        return None
    try:
        lines = Path(f"/proc/{pid}/cgroup").read_text().splitlines()
        mounts = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return None
    relative = next((line[3:] for line in lines if line.startswith("0::")), None)
    mount = next((line.split()[4] for line in mounts if " - cgroup2 " in line), None)
    if not relative or not mount or relative == "/":
        return None
    folder = Path(mount) / relative.lstrip("/")
    return folder if (folder / "cgroup.kill").exists() else None


def kill(folder: Path) -> bool:
    """SIGKILL every process of the cgroup, by the kernel: no engine call, no process can fork away."""
    try:
        (folder / "cgroup.kill").write_text("1")
        return True
    except OSError as exc:
        logger.warning("could not kill through cgroup %s: %s", folder, exc)
        return False


def procs(folder: Path) -> list[str]:
    try:
        return (folder / "cgroup.procs").read_text().split()
    except OSError:  # the cgroup went away with the container's last process
        return []
