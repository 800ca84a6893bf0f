"""The Modal sandbox: each attempt runs in a Modal Sandbox (a gVisor container in Modal's
cloud) built from the task's Dockerfile, with the task's cpu and memory, no network, and
a lifetime that ends it even if this executor dies.

What to ask Modal for is plain data (`image_spec`, `sandbox_spec`), built from the task
alone; only `prepare` turns it into SDK objects and contacts Modal, and only when
MODAL_TOKEN_ID and MODAL_TOKEN_SECRET are set. The SDK is imported on first use.
"""

import asyncio
import logging
import math
import os
import shlex
import socket
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from hemra.services.environments import history
from hemra.services.environments.capabilities import ENFORCES
from hemra.services.executor.sandboxes.base import ExecResult, Sandbox, SandboxError
from hemra.services.executor.sandboxes.docker import KILL_MARKED, MARKER_VAR

logger = logging.getLogger(__name__)

APP_NAME = "hemra"
CREDENTIALS = ("MODAL_TOKEN_ID", "MODAL_TOKEN_SECRET")
#: Modal ends a sandbox after at most a day.
MAX_LIFETIME_SECS = 24 * 3600
#: Time beyond the harness's and the verifier's for setting up, scoring and collecting.
LIFETIME_MARGIN_SECS = 600
DEFAULT_AGENT_SECS = 900
_BASE_DIRS = ("/logs/agent", "/logs/verifier", "/logs/artifacts", "/tests", "/solution")
MAX_OUTPUT_BYTES = 16 * 1024 * 1024


@dataclass
class ImageSpec:
    """How the attempt's image is made: the task's Dockerfile, or a registry image it names."""

    dockerfile: str = ""
    context_dir: str = ""
    registry_image: str = ""
    #: (host folder, sandbox path): uploaded into the image, read-only by convention.
    local_dirs: list[tuple[str, str]] = field(default_factory=list)
    #: Dockerfile lines built on the image: HEMRA's history layer (services/environments/history.py).
    layers: list[str] = field(default_factory=list)


@dataclass
class SandboxSpec:
    """The arguments of modal.Sandbox.create, without the image and app."""

    command: list[str] = field(default_factory=lambda: ["sleep", "infinity"])
    cpu: float | None = None
    memory: int | None = None
    timeout: int = DEFAULT_AGENT_SECS + LIFETIME_MARGIN_SECS
    block_network: bool = True
    workdir: str = "/"
    env: dict[str, str] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)


def credentials_missing() -> list[str]:
    return [name for name in CREDENTIALS if not os.environ.get(name)]


def image_spec(task, task_dir: Path, mounts: dict[str, str] | None = None, keep_history: bool = False) -> ImageSpec:
    environment = task_dir / "environment"
    local_dirs = sorted((host, inside) for inside, host in (mounts or {}).items())
    layers = [] if keep_history else ["USER 0", history.run_line(*history.of_task(task))]
    if (environment / "Dockerfile").is_file():
        return ImageSpec(
            dockerfile=str(environment / "Dockerfile"),
            context_dir=str(environment),
            local_dirs=local_dirs,
            layers=layers,
        )
    if task.environment.base_image:
        return ImageSpec(registry_image=task.environment.base_image, local_dirs=local_dirs, layers=layers)
    raise SandboxError(f"task {task.task_name} has neither environment/Dockerfile nor docker_image")


def sandbox_spec(task, attempt_id: str, lifetime_secs: float | None = None, network: str = "") -> SandboxSpec:
    """`network` is the run's [sandbox] network: "" and "none" block it, anything else opens it."""
    env = task.environment
    if lifetime_secs is None:
        agent = task.agent_timeout.ToNanoseconds() / 1e9 or DEFAULT_AGENT_SECS
        lifetime_secs = agent + task.verifier_timeout.ToNanoseconds() / 1e9
    return SandboxSpec(
        cpu=env.cpus or None,
        memory=env.memory_mb or None,
        block_network=network in ("", "none"),
        timeout=min(MAX_LIFETIME_SECS, math.ceil(lifetime_secs) + LIFETIME_MARGIN_SECS),
        workdir=env.workdir or "/",
        env=dict(env.env),
        tags={
            "hemra.attempt": attempt_id,
            "hemra.task": task.digest,
            "hemra.executor": f"{socket.gethostname()}:{os.getpid()}",
        },
    )


def to_modal(image: ImageSpec, modal):
    """The modal.Image for a spec (lazy: nothing is built or sent until a sandbox uses it)."""
    if image.dockerfile:
        built = modal.Image.from_dockerfile(image.dockerfile, context_dir=image.context_dir)
    else:
        built = modal.Image.from_registry(image.registry_image)
    if image.layers:
        built = built.dockerfile_commands(image.layers)
    for host, inside in image.local_dirs:
        built = built.add_local_dir(host, inside)
    return built


def _load_modal():
    missing = credentials_missing()
    if missing:
        raise SandboxError(f"the modal sandbox needs {' and '.join(missing)} set (a Modal token)")
    try:
        import modal
    except ImportError:
        raise SandboxError("the modal sandbox needs the modal Python package (pip install 'hemra[modal]')") from None
    return modal


#: Stops, then kills, every process that is not init (pid 1) nor an ancestor of this script;
#: prints the survivors and fails when any is left after eight rounds.
KILL_ALL_BUT_INIT = r"""keep=" 1 "; p=$$
while [ "$p" -gt 1 ]; do keep="$keep$p "; p=$(awk '{print $4}' /proc/$p/stat); done
for round in 1 2 3 4 5 6 7 8; do found=""
for d in /proc/[0-9]*; do q="${d#/proc/}"; case "$keep" in *" $q "*) continue;; esac
[ -r "$d/stat" ] || continue; kill -STOP "$q" 2>/dev/null && found="$found $q"; done
[ -z "$found" ] && exit 0; kill -KILL $found 2>/dev/null; sleep 0.05; done; echo "$found"; exit 1"""


class ModalSandbox(Sandbox):
    enforces = ENFORCES["modal"]

    def __init__(
        self,
        attempt_id: str,
        task,
        task_dir: Path,
        work_root: Path,
        mounts: dict[str, str] | None = None,
        network: str = "",
        lifetime_secs: float | None = None,
        endpoints=None,
        keep_history: bool = False,
    ):
        self.attempt_id = attempt_id
        # Not relayed yet: a sandbox that blocks the network leaves an agent inside without
        # its model. (Modal can allow egress to chosen CIDRs, `cidr_allowlist`; not used yet.)
        self.endpoints = list(endpoints or ())
        self.task = task
        self.image = image_spec(task, task_dir, mounts, keep_history)
        self.spec = sandbox_spec(task, attempt_id, lifetime_secs, network)
        self.box = None
        self._modal = None

    async def prepare(self) -> None:
        if self.endpoints and self.spec.block_network:
            logger.warning(
                "the modal sandbox does not relay model endpoints yet; the agent cannot reach %s",
                ", ".join(f"{host}:{port}" for host, port in self.endpoints),
            )
        modal = self._modal = _load_modal()
        try:
            app = await modal.App.lookup.aio(APP_NAME, create_if_missing=True)
            spec = self.spec
            self.box = await modal.Sandbox.create.aio(
                *spec.command,
                app=app,
                image=to_modal(self.image, modal),
                cpu=spec.cpu,
                memory=spec.memory,
                timeout=spec.timeout,
                block_network=spec.block_network,
                workdir=spec.workdir,
                env=spec.env,
                tags=spec.tags,
            )
        except modal.exception.Error as exc:
            raise SandboxError(f"modal could not start a sandbox: {exc}") from None
        result = await self.exec("mkdir -p " + " ".join(_BASE_DIRS), cwd="/")
        if result.exit_code != 0:
            raise SandboxError(f"cannot lay out the sandbox: {result.stderr.decode(errors='replace')}")

    async def exec(self, command, cwd="", env=None, timeout=None, stdin=b"", on_output=None):
        if self.box is None:
            raise SandboxError("the modal sandbox is not running")
        marker = uuid.uuid4().hex
        started = time.monotonic()
        try:
            process = await self.box.exec.aio(
                "bash",
                "-c",
                command,
                workdir=cwd or self.spec.workdir,
                env={**(env or {}), MARKER_VAR: marker},
                text=False,
                timeout=math.ceil(timeout) + 5 if timeout else None,
            )
        except self._modal.exception.Error as exc:
            raise SandboxError(f"modal could not run a command: {exc}") from None
        if stdin:
            process.stdin.write(stdin)
        process.stdin.write_eof()
        await process.stdin.drain.aio()
        chunks = {"stdout": [], "stderr": []}
        reading = asyncio.gather(
            _read(process.stdout, "stdout", chunks, on_output), _read(process.stderr, "stderr", chunks, on_output)
        )
        done, _ = await asyncio.wait({reading}, timeout=timeout)
        timed_out = not done
        if timed_out:
            await self._kill_marked(marker)
            await asyncio.wait({reading}, timeout=10)
            reading.cancel()
        code = await process.wait.aio()
        return ExecResult(
            code if code is not None else -1,
            b"".join(chunks["stdout"]),
            b"".join(chunks["stderr"]),
            timed_out,
            time.monotonic() - started,
        )

    async def _kill_marked(self, marker: str) -> None:
        process = await self.box.exec.aio("sh", "-c", KILL_MARKED, f"{MARKER_VAR}={marker}")
        await process.wait.aio()

    async def stop_processes(self) -> None:
        """Kill every process but the sandbox's init and this killer's own ancestry (Modal's exec
        agent), stopping them first so none forks away, then check that none is left."""
        if self.box is None:
            return
        process = await self.box.exec.aio("sh", "-c", KILL_ALL_BUT_INIT)
        if await process.wait.aio() != 0:
            left = (await process.stdout.read.aio()).decode(errors="replace").strip()
            raise SandboxError(f"processes survived the kill in the modal sandbox: {left[:200]}")

    async def read_file(self, path, limit=None):
        errors = self._modal.exception
        try:
            data = await self.box.filesystem.read_bytes.aio(self._absolute(path))
            return data if limit is None else data[:limit]
        except errors.SandboxFilesystemNotFoundError:
            raise FileNotFoundError(path) from None
        except errors.SandboxFilesystemIsADirectoryError:
            raise IsADirectoryError(path) from None
        except errors.SandboxFilesystemPermissionError:
            raise PermissionError(path) from None

    async def write_files(self, files):
        errors = self._modal.exception
        for path, content, executable in files:
            path = self._absolute(path)
            try:
                await self.box.filesystem.write_bytes.aio(content, path)
            except errors.SandboxFilesystemPermissionError:
                raise PermissionError(path) from None
            if executable:
                await self.exec(f"chmod 755 {shlex.quote(path)}", cwd="/")

    async def remove_path(self, path):
        await self.exec(f"rm -rf -- {shlex.quote(self._absolute(path))}", cwd="/")

    async def list_files(self, folder):
        folder = self._absolute(folder)
        quoted = shlex.quote(folder)
        result = await self.exec(f"[ -d {quoted} ] && find {quoted} -type f", cwd="/")
        return sorted(line for line in result.stdout.decode(errors="replace").splitlines() if line)

    async def kill(self) -> None:
        if self.box is not None:
            await self.box.terminate.aio()

    async def teardown(self) -> None:
        if self.box is not None:
            try:
                await self.box.terminate.aio()
            except self._modal.exception.Error:
                pass
            self.box = None

    def _absolute(self, path: str) -> str:
        return path if path.startswith("/") else self.spec.workdir.rstrip("/") + "/" + path


async def _read(stream, name: str, chunks: dict, on_output) -> None:
    size = 0
    async for chunk in stream:
        if on_output is not None:
            await on_output(name, chunk)
        if size < MAX_OUTPUT_BYTES:
            chunks[name].append(chunk[: MAX_OUTPUT_BYTES - size])
        size += len(chunk)
