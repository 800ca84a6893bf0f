"""The process's one connection to the Docker engine (the SDK is loaded on first use), used
to build task images and to run their containers."""

import os
import threading

from services.environments.errors import SandboxError

_client = None
_client_lock = threading.Lock()


def client():
    """The process's Docker client (the SDK is loaded on first use)."""
    global _client
    with _client_lock:
        if _client is None:
            try:
                import docker
            except ImportError:
                raise SandboxError("the docker sandbox needs the docker Python package (pip install docker)") from None
            try:
                candidate = docker.from_env(timeout=300, max_pool_size=64)
                candidate.ping()
            except docker.errors.DockerException as exc:
                raise SandboxError(f"no Docker engine answers: {exc} (see docs/sandboxes.md)") from None
            _client = candidate
    return _client


def docker_errors():
    import docker.errors

    return docker.errors


#: Limits when the task names none, so that one attempt (a fork bomb, a leak) cannot take the
#: machine or the engine down: Harbor's defaults for cpus and memory, and a process cap.
DEFAULT_CPUS = 1.0
DEFAULT_MEMORY_MB = 2048
PIDS_LIMIT_VAR = "HEMRA_DOCKER_PIDS_LIMIT"
DEFAULT_PIDS_LIMIT = 1024


def limits(env) -> tuple[float, int, int]:
    """(cpus, memory MB, pids) of a task's container: the task's own, else the defaults, and
    never more than this host has (cores; three quarters of its memory)."""
    cores = os.cpu_count() or 1
    memory_mb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // (1024 * 1024)
    cpus = min(env.cpus if env.cpus > 0 else DEFAULT_CPUS, float(cores))
    memory = min(env.memory_mb if env.memory_mb > 0 else DEFAULT_MEMORY_MB, memory_mb * 3 // 4)
    pids = int(os.environ.get(PIDS_LIMIT_VAR) or DEFAULT_PIDS_LIMIT)
    return cpus, max(int(memory), 64), max(pids, 64)
