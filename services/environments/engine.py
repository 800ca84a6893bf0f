"""The process's one connection to the Docker engine (the SDK is loaded on first use), used
to build task images and to run their containers."""

import os
import socket
import threading
import uuid

from hemra.services.environments.errors import SandboxError

#: The labels every container HEMRA starts carries (container_labels): whose it is, so that a
#: process's own leftovers are found (and removed) by a later one, and never another's.
LABEL_ATTEMPT, LABEL_EXECUTOR, LABEL_HOST, LABEL_PID = "hemra.attempt", "hemra.executor", "hemra.host", "hemra.pid"
#: The stable identity of the executor (or CLI) that started the container: HEMRA_EXECUTOR_ID
#: when set, else the host's name. A restarted executor has the same owner; the executors
#: sharing one engine (compose, one container each) have each their own.
LABEL_OWNER = "hemra.owner"
OWNER_VAR = "HEMRA_EXECUTOR_ID"
#: The process's start time (processes.start_time): with its pid, it tells that process from a
#: later one given the same pid (in a restarted container, a health check's).
LABEL_STARTED = "hemra.started"
#: This process's own mark: a restarted executor container has the same host name and often
#: the same pid as the one before it, whose containers are orphans all the same.
LABEL_INSTANCE = "hemra.instance"
INSTANCE = uuid.uuid4().hex

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


def owner() -> str:
    """This process's stable identity among those sharing the engine (LABEL_OWNER)."""
    return os.environ.get(OWNER_VAR, "").strip() or socket.gethostname()


def container_labels(started: str = "") -> dict[str, str]:
    """The labels naming this process on every container it starts (its owner, host, pid,
    `started`: its start time, when the caller knows it, and instance): what the start-up
    sweep (sandboxes/docker/cleanup.remove_orphans) reads. Without a start time a container is kept
    while any process has its pid: never removed early, at worst late."""
    host, pid = socket.gethostname(), os.getpid()
    return {
        LABEL_OWNER: owner(),
        LABEL_EXECUTOR: f"{host}:{pid}",
        LABEL_HOST: host,
        LABEL_PID: str(pid),
        LABEL_STARTED: started,
        LABEL_INSTANCE: INSTANCE,
    }


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
