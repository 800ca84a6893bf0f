"""The process's one connection to the Docker engine (the SDK is loaded on first use), used
to build task images and to run their containers."""

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
