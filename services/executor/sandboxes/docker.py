"""The Docker sandbox: each attempt gets a container of its own, from its task's image
(services/environments/images.py), with the task's cpu and
memory limits and no network.

/logs, /tests and /solution are bound from the attempt's folder on the host, so what
the harness logged outlives the container and the verifier's files are read without a
round trip through the engine. Every other path lives in the container's own file
system and is reached through the engine's archive API. Commands run with `docker exec`.

Containers carry labels naming the attempt, the executor's stable identity (its owner)
and its process (host, pid, start time); an executor that starts removes the containers of
its owner's earlier processes that no longer run, never another owner's. The SDK is
blocking, so every call runs in a thread; long streams get threads of their own so they
never hold the event loop's shared pool.
"""

import asyncio
import contextlib
import io
import ipaddress
import logging
import os
import posixpath
import secrets
import shlex
import shutil
import socket
import tarfile
import tempfile
import threading
import time
import uuid
from pathlib import Path

from services.common.blame import AgentFault
from services.environments.capabilities import ENFORCES
from services.environments.engine import (
    INSTANCE,
    LABEL_ATTEMPT,
    LABEL_HOST,
    LABEL_INSTANCE,
    LABEL_OWNER,
    LABEL_PID,
    LABEL_STARTED,
    client,
    container_labels,
    docker_errors,
    limits,
    owner,
)
from services.environments.images import LABEL_TASK, ensure_image
from services.executor import processes
from services.executor.sandboxes import docker_configured, safefs
from services.executor.sandboxes.base import (
    MAX_SERVICE_OUTPUT,
    ExecResult,
    Sandbox,
    SandboxError,
    discard,
    remove_later,
)
from services.executor.sandboxes.relay import Relay

logger = logging.getLogger(__name__)

#: Paths bound read-write from the attempt's folder on the host.
BOUND = ("/logs", "/tests", "/solution")
_LOG_DIRS = ("logs/agent", "logs/verifier", "logs/artifacts")
#: Cap on captured output per command; the rest is dropped (the files stay whole).
MAX_OUTPUT_BYTES = 16 * 1024 * 1024
#: Every process a command starts inherits this variable; a timeout kills them all by it.
MARKER_VAR = "HEMRA_EXEC_ID"
#: Stops, then kills, every process whose environment carries the marker, until none is left
#: (stopping first so none can fork away between the scan and the kill).
KILL_MARKED = r"""m="$0"; for round in 1 2 3 4 5 6 7 8; do found=""
for d in /proc/[0-9]*; do p="${d#/proc/}"; [ "$p" = "$$" ] && continue
if tr '\0' '\n' < "$d/environ" 2>/dev/null | grep -qxF "$m"; then kill -STOP "$p" 2>/dev/null; found="$found $p"; fi
done; [ -z "$found" ] && exit 0; kill -KILL $found 2>/dev/null; done"""
#: How long a killed command's output stream may take to close before the container is killed whole.
_KILL_GRACE_SECS = 5.0
#: How long the engine may take to kill a command's processes before HEMRA kills through the cgroup.
_ENGINE_KILL_SECS = 5.0
#: The roles of an attempt's other containers: their names end in them, and on the attempt's
#: network (verifier.network = "bridge") they are its host names: the verifier reaches the
#: task's service as `task`.
VERIFIER, SERVICE = "verifier", "task"


def _labels() -> dict[str, str]:
    """This executor process's labels (engine.container_labels), with its start time."""
    return container_labels(processes.start_time(os.getpid()))


def _cgroup_of(pid: int) -> Path | None:
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


def _cgroup_kill(folder: Path) -> bool:
    """SIGKILL every process of the cgroup, by the kernel: no engine call, no process can fork away."""
    try:
        (folder / "cgroup.kill").write_text("1")
        return True
    except OSError as exc:
        logger.warning("could not kill through cgroup %s: %s", folder, exc)
        return False


def _cgroup_procs(folder: Path) -> list[str]:
    try:
        return (folder / "cgroup.procs").read_text().split()
    except OSError:  # the cgroup went away with the container's last process
        return []


#: A workspace copied into a fresh container is spooled to disk past this size.
_SPOOL_BYTES = 32 * 1024 * 1024


def _plain_archive(chunks, out) -> bool:
    """Copy a tar stream (the engine's archive of a folder) into `out`, keeping folders, regular
    files and links only: a device node, FIFO or socket the agent made never reaches the verifier.
    False, with nothing copied, when the archived path is not a folder: the agent replaced its
    workspace with a link or a file, and the verifier gets an empty one instead."""
    reader = _ChunkReader(chunks)
    with tarfile.open(fileobj=reader, mode="r|") as source:
        top = source.next()
        if top is None or not top.isdir():
            for _ in source:  # read to its end: the engine's stream is not left half read
                pass
            return False
        with tarfile.open(fileobj=out, mode="w|") as target:
            target.addfile(top)
            for member in source:
                if member.isreg():
                    target.addfile(member, source.extractfile(member))
                elif member.isdir() or member.issym() or member.islnk():
                    target.addfile(member)
    return True


class _ChunkReader(io.RawIOBase):
    """A readable file over an iterator of byte chunks (streamed, never joined whole)."""

    def __init__(self, chunks):
        self.chunks = iter(chunks)
        self.pending = b""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        while not self.pending:
            self.pending = next(self.chunks, b"")
            if not self.pending:
                return 0
        size = min(len(buffer), len(self.pending))
        buffer[:size], self.pending = self.pending[:size], self.pending[size:]
        return size


def remove_orphans(alive=None) -> list[str]:
    """Remove the containers of this executor's earlier instances: those labelled with its
    owner (engine.owner: HEMRA_EXECUTOR_ID, else the host's name) whose process no longer runs.
    Another owner's containers are never touched, however they look: several executors may
    share one engine. Quietly nothing when no engine is configured or reachable. Returns the
    removed IDs."""
    if not docker_configured():
        return []
    alive = alive or processes.alive
    try:
        api = client().api
        found = api.containers(all=True, filters={"label": [f"{LABEL_OWNER}={owner()}"]})
        # Those an executor started before containers named their owner: this host's.
        found += [
            container
            for container in api.containers(all=True, filters={"label": [f"{LABEL_HOST}={socket.gethostname()}"]})
            if LABEL_OWNER not in container["Labels"]
        ]
    except Exception as exc:  # no engine, or it went away: nothing of ours can be running there
        logger.debug("no orphan containers checked: %s", exc)
        return []
    removed = []
    for container in found:
        pid = container["Labels"].get(LABEL_PID, "")
        if not pid.isdigit():
            continue
        if int(pid) == os.getpid() and container["Labels"].get(LABEL_INSTANCE) == INSTANCE:
            continue  # this process's own
        if int(pid) != os.getpid() and alive(int(pid), container["Labels"].get(LABEL_STARTED, "")):
            continue
        removed += _remove_now(api, container["Id"], "orphan container")
    return removed + _remove_networks(api, {"label": [f"{LABEL_OWNER}={owner()}"]}, alive)


def _remove_networks(api, filters: dict, alive=None) -> list[str]:
    """Remove the attempts' networks (verifier.network = "bridge") these labels select, of
    processes that no longer run (all of them when `alive` is None: this process's own)."""
    try:
        found = api.networks(filters=filters)
    except Exception as exc:  # the engine went away
        logger.debug("no networks checked: %s", exc)
        return []
    removed = []
    for network in found:
        labels = network.get("Labels") or {}
        pid = labels.get(LABEL_PID, "")
        if LABEL_ATTEMPT not in labels or not pid.isdigit():
            continue
        if alive is not None:
            if int(pid) == os.getpid() and labels.get(LABEL_INSTANCE) == INSTANCE:
                continue
            if int(pid) != os.getpid() and alive(int(pid), labels.get(LABEL_STARTED, "")):
                continue
        if _remove_network(api, network["Id"]):
            removed.append(network["Id"])
    return removed


def remove_own() -> list[str]:
    """Remove every container this process made that is still there, once its attempts are
    over (an executor on its way out): each attempt's teardown removes its own, so any found
    here is logged. Returns the removed IDs."""
    try:
        api = client().api
        found = api.containers(all=True, filters={"label": [f"{LABEL_INSTANCE}={INSTANCE}"]})
    except Exception as exc:  # no engine, or it went away
        logger.debug("own containers not checked: %s", exc)
        return []
    removed = [gone for container in found for gone in _remove_now(api, container["Id"], "container left")]
    if found:
        logger.warning("%d container(s) of finished attempts were left; removed %d", len(found), len(removed))
    return removed + _remove_networks(api, {"label": [f"{LABEL_INSTANCE}={INSTANCE}"]})


def _remove_now(api, container_id: str, what: str) -> list[str]:
    """[container_id] once removed (with its anonymous volumes), [] when it was not."""
    try:
        api.remove_container(container_id, force=True, v=True)
        return [container_id]
    except docker_errors().NotFound:
        return []
    except docker_errors().APIError as exc:
        logger.warning("could not remove %s %s: %s", what, container_id[:12], exc)
        return []


class DockerSandbox(Sandbox):
    enforces = ENFORCES["docker"]

    def __init__(
        self,
        attempt_id: str,
        task,
        task_dir: Path,
        work_root: Path,
        mounts: dict[str, str] | None = None,
        network: str = "",
        endpoints=None,
        image: str = "",
        emptied: tuple[str, ...] = (),
        keep_history: bool = False,
        verifier_network: str = "",
        role: str = "",
    ):
        self.attempt_id = attempt_id
        self.task = task
        self.task_dir = task_dir
        self.folder = work_root / attempt_id
        self.workdir = task.environment.workdir or "/"
        self.mounts = dict(mounts or {})
        #: "none" unless the run opened it ([sandbox] network): then it enforces no network_block.
        self.network = network or "none"
        #: The run's [sandbox] image: every task's environment is built on it instead.
        self.base_image = image
        #: The run keeps the task's history: no HEMRA history layer on its image.
        self.keep_history = keep_history
        #: Container paths that start empty: an anonymous volume (not filled from the image) is
        #: mounted over each, hiding what the image holds there (the verifier's container, where
        #: the agent's workspace is copied in, replacing the image's). The engine removes it with
        #: the container, whoever owns its files.
        self.emptied = emptied
        #: [verifier] network: "bridge" gives the attempt a Docker network of its own (the agent's
        #: sandbox makes it, see _create_network) for its verifier's and its service's containers.
        self.verifier_network = verifier_network or "none"
        #: What this container is: "" the agent's, VERIFIER or SERVICE (on the attempt's network:
        #: no raw sockets; the service runs the image's own command, started once the workspace is in).
        self.role = role
        #: The attempt's network, made by the agent's sandbox ("" without one).
        self.network_id = ""
        #: The task's service beside the verifier (bridge), torn down with the verifier's container.
        self.service: DockerSandbox | None = None
        #: The service's command once started, or why it did not start.
        self.command: list[str] = []
        self.not_started = ""
        if self.network != "none":
            self.enforces = ENFORCES["docker"] - {"network_block"}
        self.container_id = ""
        self.image = ""
        self.started = 0.0
        self._failed_commands = 0
        #: The container's cgroup folder in the unified hierarchy (None: kill through the engine).
        self._cgroup: Path | None = None
        #: Every process was killed (stop_processes, kill): the next command starts it again.
        self._stopped = False
        #: Torn down: a container whose creation was still under way (its attempt cancelled
        #: mid-start) is removed by the thread that created it.
        self._torn_down = False
        #: The model relay runs in the harness phase only; stop_processes ends that phase.
        self._relay_allowed = True
        #: The verifier's container: True once reserved, then its start (a future) from `prepare` on.
        self._spare: bool | asyncio.Future | None = None
        self._carry: list[str] = []
        self.not_carried: list[str] = []
        #: The only way out of a closed container: to the harness's model endpoints (relay.py).
        #: A container on the host's network reaches them itself (and the relay could not
        #: listen on their ports there).
        self.relay = Relay(endpoints if self.network != "host" and not self.network.startswith("container:") else ())

    # --- life cycle -------------------------------------------------------
    async def prepare(self) -> None:
        await asyncio.to_thread(self._prepare_folder)
        image = await asyncio.to_thread(ensure_image, self.task, self.task_dir, self.base_image, self.keep_history)
        if self.verifier_network == "bridge":
            if self._spare is None:  # the planner refuses bridge without a fresh verifier sandbox
                raise SandboxError('verifier.network = "bridge" needs the verifier in a fresh sandbox')
            await asyncio.to_thread(self._create_network)
        if self._spare is not None:  # the verifier's container starts beside this one, then waits
            self._spare = asyncio.ensure_future(self._spare_container(self._carry))
        await self.relay.open()
        await asyncio.to_thread(self._start, image)
        await asyncio.to_thread(self._launch_relay)

    def reserve_fresh(self, carry: list[str]) -> None:
        self._spare, self._carry = True, [self._absolute(path) for path in carry]

    async def _spare_container(self, carry: list[str]) -> "DockerSandbox":
        """A container for the verifier, where the container paths of `carry` start empty (the
        agent's replace them): empty volumes mounted there, not the image's files removed by a
        command, so the container is ready as soon as it runs. With a verifier network, the
        verifier's container is on the attempt's network, and the task's service container is
        made beside it (created, not started: it starts once the workspace is in)."""
        spare = self._sibling(VERIFIER, carry)
        try:
            await spare.prepare()
            if self.network_id and await asyncio.to_thread(_image_command, spare.image):
                spare.service = self._sibling(SERVICE, carry)
                await spare.service.prepare()
        except BaseException:
            await spare.teardown()
            raise
        return spare

    def _sibling(self, role: str, carry: list[str]) -> "DockerSandbox":
        """Another container of this attempt from the same image: the verifier's or the service's."""
        return DockerSandbox(
            f"{self.attempt_id}-{role}",
            self.task,
            self.task_dir,
            self.folder.parent,
            network=self.network_id or "none",
            image=self.base_image,
            emptied=tuple(path for path in carry if self._host(path) is None),
            keep_history=self.keep_history,
            role=role,
        )

    def _create_network(self) -> None:
        """The attempt's own network (verifier.network = "bridge"): internal (no route beyond
        it), and the bridge has no address on the host (inhibit_ipv4), so no host service
        answers on it, loopback or not; another attempt's is another bridge and subnet. Labelled
        like the attempt's containers, so the start-up sweep removes it after a kill -9."""
        from docker.types import IPAMConfig, IPAMPool

        for attempt in range(1, _SUBNET_TRIES + 1):
            subnet, gateway = _attempt_subnet()
            try:
                created = client().api.create_network(
                    f"hemra-{self.attempt_id}",
                    driver="bridge",
                    internal=True,
                    options={"com.docker.network.bridge.inhibit_ipv4": "true"},
                    ipam=IPAMConfig(pool_configs=[IPAMPool(subnet=subnet, gateway=gateway)]),
                    labels={LABEL_ATTEMPT: self.attempt_id, LABEL_TASK: self.task.digest, **_labels()},
                )
                break
            except docker_errors().APIError as exc:
                if attempt < _SUBNET_TRIES and "overlaps" in str(exc.explanation or exc):
                    continue  # another attempt's network holds that range: draw again
                raise SandboxError(f"cannot make the verifier's network: {exc.explanation or exc}") from None
        self.network_id = created["Id"]
        if self._torn_down:  # cancelled meanwhile: nothing will remove it but this thread
            network_id, self.network_id = self.network_id, ""
            _remove("", None, network_id)

    def _prepare_folder(self) -> None:
        if self.folder.exists():
            shutil.rmtree(self.folder)
        for name in (*_LOG_DIRS, "tests", "solution"):
            (self.folder / name).mkdir(parents=True, exist_ok=True)
        # The agent is root in its container and may leave a setuid-root file in a bound folder:
        # no other user of the host may walk into the attempt's folder to reach it (the engine,
        # as root, binds its folders all the same). HEMRA never runs what is in there.
        self.folder.chmod(0o700)
        # Any user the image runs as may write its logs.
        for path in (
            self.folder / "logs",
            *(self.folder / d for d in _LOG_DIRS),
            self.folder / "tests",
            self.folder / "solution",
        ):
            path.chmod(0o777)

    def _start(self, image: str) -> None:
        from docker.types import Mount

        api = client().api
        binds = {str(self.folder / top.lstrip("/")): {"bind": top, "mode": "rw"} for top in BOUND}
        binds.update({host: {"bind": inside, "mode": "ro"} for inside, host in self.mounts.items()})
        binds.update(self.relay.binds())
        cpus, memory_mb, pids = limits(self.task.environment)
        on_network = bool(self.role) and self.network != "none"
        host_config = api.create_host_config(
            binds=binds,
            mounts=[Mount(path, None, type="volume", no_copy=True) for path in self.emptied] or None,
            network_mode=self.network,
            init=True,
            pids_limit=pids,
            extra_hosts=self.relay.extra_hosts() or None,
            sysctls=self.relay.sysctls() or None,
            nano_cpus=int(cpus * 1e9),
            mem_limit=f"{memory_mb}m",
            # No swap: a task over its memory limit is OOM-killed, not slowed down.
            memswap_limit=f"{memory_mb}m",
            # On the attempt's network, no forged packets (a raw frame to the bridge's link-local
            # address): only the network's own containers, by their addresses and names.
            cap_drop=["NET_RAW"] if on_network else None,
            # The engine's DNS answers the network's own names (`task`) and forwards the rest to
            # the host's resolvers, from the host itself for a loopback one (Docker before 23.0.11,
            # 25.0.5 and 26: CVE-2024-29018): a way out of an internal network. Forwarded to
            # 0.0.0.0, every other name fails at once, inside the container.
            dns=["0.0.0.0"] if on_network else None,
            dns_opt=["timeout:1", "attempts:1"] if on_network else None,
        )
        self.image = image
        self.started = time.time()
        try:
            created = api.create_container(
                image,
                # The service runs what its image says (ENTRYPOINT, CMD); every other container waits.
                entrypoint=None if self.role == SERVICE else ["sleep", "infinity"],
                working_dir=self.workdir,
                hostname="hemra",
                environment=dict(self.task.environment.env),
                labels={LABEL_ATTEMPT: self.attempt_id, LABEL_TASK: self.task.digest, **_labels()},
                host_config=host_config,
                networking_config=api.create_networking_config(
                    {self.network: api.create_endpoint_config(aliases=[self.role])}
                )
                if on_network
                else None,
                name=f"hemra-{self.attempt_id}",
            )
            self.container_id = created["Id"]
            if self._torn_down:
                container_id, self.container_id = self.container_id, ""
                _remove(container_id, None)
                return
            if self.role != SERVICE:
                self._boot()
        except docker_errors().APIError as exc:
            raise SandboxError(f"cannot start a container of {image}: {exc.explanation or exc}") from None

    def _boot(self) -> None:
        """Start the (created or stopped) container and find its cgroup, so that a kill never
        depends on the engine answering in time."""
        api = client().api
        if self._stopped:  # killed by the kernel: wait until the engine has seen it stop
            api.wait(self.container_id, timeout=60)
        api.start(self.container_id)
        self._cgroup = _cgroup_of(api.inspect_container(self.container_id)["State"].get("Pid") or 0)

    def _launch_relay(self) -> None:
        try:
            self.relay.launch(client().api, self.container_id)
        except docker_errors().APIError as exc:
            raise SandboxError(
                f"cannot start the model relay in container {self.container_id[:12]}: {exc.explanation or exc}"
            ) from None

    async def kill(self) -> None:
        if self.container_id:
            await asyncio.to_thread(self._kill_all)

    def _kill_all(self) -> None:
        """Kill every process in the container at once, its init included, through the kernel
        (cgroup.kill) when HEMRA can reach the container's cgroup, else through the engine. The
        container stops; its files stay, and the next command starts it again."""
        self._stopped = True
        if self._cgroup is not None and _cgroup_kill(self._cgroup):
            return
        try:
            client().api.kill(self.container_id)
        except docker_errors().APIError:  # already stopped or gone
            pass

    async def stop_processes(self) -> None:
        if not self.container_id:
            return
        await asyncio.to_thread(self._stop_all)

    def _stop_all(self) -> None:
        self._relay_allowed = False
        self._kill_all()
        # Its processes are gone once its cgroup is empty (read from the kernel, not the engine).
        deadline = time.monotonic() + 60
        while (
            self._cgroup is not None
            and _cgroup_procs(self._cgroup)
            or self._cgroup is None
            and client().api.inspect_container(self.container_id)["State"].get("Running")
        ):
            if time.monotonic() > deadline:
                raise SandboxError(f"container {self.container_id[:12]}: processes survived the kill")
            time.sleep(0.01)

    async def fresh(self, carry: list[str]) -> "DockerSandbox":
        carry = [self._absolute(path) for path in carry]
        spare, self._spare = self._spare, None
        if not isinstance(spare, asyncio.Future) or carry != self._carry:
            if isinstance(spare, asyncio.Future):
                await discard(spare)
            spare = self._spare_container(carry)
        other = await spare
        try:
            for path in carry:
                if self._host(path) is not None:
                    await asyncio.to_thread(self._move_to, other, path)
                else:
                    await asyncio.to_thread(self._copy_to, other, path)
                    if other.service is not None:
                        await asyncio.to_thread(self._copy_to, other.service, path)
            if other.service is not None:
                await asyncio.to_thread(other.service.start_service)
        except BaseException:
            await other.teardown()
            raise
        other.network_note = self._network_note(other)
        return other

    def _network_note(self, verifier: "DockerSandbox") -> dict:
        """What the verifier's network holds, for the attempt's verifier_sandbox event."""
        if not self.network_id:
            return {}
        service = verifier.service
        if service is None:
            return {"network": "bridge", "service": "", "message": "the task's image has no command: no service runs"}
        note = {"network": "bridge", "service": SERVICE, "command": service.command}
        if service.not_started:
            note["message"] = f"the task's service did not start: {service.not_started}"
        return note

    def start_service(self) -> None:
        """Start the task's service container (its image's own command), once the agent's
        workspace is in. What keeps it from starting (a command the workspace lacks) is noted
        for the verifier to find, never an infrastructure failure: the agent's files can cause it."""
        api = client().api
        try:
            self.command = _image_command(self.image)
            api.start(self.container_id)
        except docker_errors().APIError as exc:
            self.not_started = str(exc.explanation or exc)

    async def service_output(self) -> bytes:
        if self.service is None or not self.service.container_id:
            return b""

        def read() -> bytes:
            try:
                logs = client().api.logs(self.service.container_id, stdout=True, stderr=True, tail=10000)
            except docker_errors().APIError:
                return b""
            return logs[-MAX_SERVICE_OUTPUT:]

        return await asyncio.to_thread(read)

    def _move_to(self, other: "DockerSandbox", path: str) -> None:
        """Hand a bound folder (such as /logs/agent) over to the other sandbox: moved on the host,
        not copied (this container's processes are dead and its files are not read again), so
        however much the agent wrote there costs no time and no disk. Whatever it is (a folder, a
        file, a link) it moves as it is; HEMRA reads it later through safefs, never following a link."""
        # Its parent is a bound top folder (/logs): HEMRA's own, a mount point, never a link.
        safefs.remove(other.folder, path.lstrip("/"))
        try:
            os.rename(self.folder / path.lstrip("/"), other.folder / path.lstrip("/"))
        except FileNotFoundError:  # the agent removed it: nothing to carry
            pass

    def _copy_to(self, other: "DockerSandbox", path: str) -> None:
        """Copy `path` into the other container (where it was removed), through the engine, as
        plain data: regular files, folders and links only (see _plain_archive)."""
        api = client().api
        try:
            chunks, _ = api.get_archive(self.container_id, path)
        except docker_errors().NotFound:
            return
        with tempfile.SpooledTemporaryFile(max_size=_SPOOL_BYTES) as archive:
            if not _plain_archive(chunks, archive):
                other.not_carried.append(path)
                return
            archive.seek(0)
            try:
                api.put_archive(other.container_id, posixpath.dirname(path) or "/", archive)
            except docker_errors().APIError as exc:
                raise SandboxError(
                    f"cannot copy {path} into the verifier's container: {exc.explanation or exc}"
                ) from None

    async def teardown(self) -> None:
        """Kill and remove the container and the attempt's folder in the background: the
        attempt's result is already kept, and the next attempt need not wait. The thread is
        not a daemon, so the process finishes the removal before it exits; after kill -9 the
        next executor removes the orphan."""
        spare, self._spare = self._spare, None
        if isinstance(spare, asyncio.Future):  # made for a verifier that never ran
            await discard(spare)
        await self.relay.close()
        self._torn_down = True
        if self.service is not None:
            await self.service.teardown()
        container_id, self.container_id = self.container_id, ""
        network_id, self.network_id = self.network_id, ""
        if container_id or network_id or self.folder.exists():
            remove_later(_remove, container_id, self.folder, network_id, name="hemra-docker-rm")

    async def oom_kills(self) -> int:
        # A process killed for memory makes some command fail; without one, nothing to look up.
        if not self.container_id or not self._failed_commands:
            return 0
        return await asyncio.to_thread(self._count_oom)

    def _count_oom(self) -> int:
        # `until` in the past: the engine answers at once instead of waiting for new events.
        events = client().api.events(
            since=self.started - 1,
            until=time.time(),
            decode=True,
            filters={"container": self.container_id, "event": "oom"},
        )
        return sum(1 for _ in events)

    # --- commands ---------------------------------------------------------
    async def exec(self, command, cwd="", env=None, timeout=None, stdin=b"", on_output=None):
        marker = uuid.uuid4().hex
        argv = ["bash", "-c", command]
        if stdin:
            stdin_path = f"/tmp/.hemra-stdin-{marker}"
            await self.write_files([(stdin_path, stdin, False)])
            argv = ["bash", "-c", 'bash -c "$1" < "$0"; status=$?; rm -f "$0"; exit $status', stdin_path, command]
        started = time.monotonic()
        exec_id = await asyncio.to_thread(self._exec_create, argv, cwd, {**(env or {}), MARKER_VAR: marker})
        stream = _Stream(on_output)
        pump = stream.start(lambda: client().api.exec_start(exec_id, stream=True, demux=True))
        timed_out = False
        try:
            # The engine ends the stream when the command's own process exits, even if something
            # it started still holds the output open.
            done, _ = await asyncio.wait({pump}, timeout=timeout)
            if not done:
                timed_out = True
                await self._end(marker, pump)
        except asyncio.CancelledError:
            stream.close()
            await asyncio.shield(self._kill_marked(marker))
            raise
        if pump.done():
            pump.result()  # re-raises a broken stream
        else:  # nothing more can be killed: stop reading, the command is over
            stream.close()
            pump.cancel()
        code = (await asyncio.to_thread(client().api.exec_inspect, exec_id)).get("ExitCode")
        if code is None:
            code = -1
        self._failed_commands += code != 0
        return ExecResult(code, stream.data("stdout"), stream.data("stderr"), timed_out, time.monotonic() - started)

    async def _end(self, marker: str, pump: asyncio.Future) -> None:
        """At a timeout, kill the command's processes (all of them, through the cgroup, when
        the engine is slow or one hid from the marker and kept the output open)."""
        await self._kill_marked(marker)
        done, _ = await asyncio.wait({pump}, timeout=_KILL_GRACE_SECS)
        if not done:
            await asyncio.to_thread(self._kill_all)
            await asyncio.wait({pump}, timeout=_KILL_GRACE_SECS)

    def _exec_create(self, argv: list[str], cwd: str, env: dict[str, str]) -> str:
        api = client().api
        if self._stopped:
            self._revive()
        for attempt in (1, 2):
            try:
                return api.exec_create(
                    self.container_id,
                    argv,
                    stdout=True,
                    stderr=True,
                    environment=env,
                    workdir=self._absolute(cwd or self.workdir),
                )["Id"]
            except docker_errors().APIError as exc:
                # The agent may stop its own container (kill its init): its processes are gone, its
                # files are not; start it again rather than blame the infrastructure.
                if attempt == 1 and exc.status_code == 409 and "not running" in str(exc.explanation or exc):
                    self._revive()
                    continue
                raise SandboxError(
                    f"cannot run a command in container {self.container_id[:12]}: {exc.explanation or exc}"
                ) from None
        raise AssertionError("unreachable")

    def _revive(self) -> None:
        """Start the stopped container again; the model relay too, unless the harness phase is over."""
        try:
            self._boot()
            if self._relay_allowed:
                self._launch_relay()
        except docker_errors().APIError as exc:
            if not self._workdir_is_folder():
                raise AgentFault(
                    f"the agent replaced its workspace {self.workdir} with a file: its container cannot start again"
                ) from None
            raise SandboxError(
                f"cannot start container {self.container_id[:12]} again: {exc.explanation or exc}"
            ) from None
        self._stopped = False

    async def reopen(self) -> None:
        if self.container_id and self._stopped:
            await asyncio.to_thread(self._revive)

    def _workdir_is_folder(self) -> bool:
        """Whether the container's workdir is a folder (or a link, which the engine follows), as
        HEMRA reads it from the stopped container through the engine."""
        try:
            _, stat = client().api.get_archive(self.container_id, self.workdir)
        except docker_errors().APIError:
            return True  # not readable either: nothing says the agent is to blame
        mode = int(stat.get("mode", 0))
        return bool(mode & (1 << 31) or mode & (1 << 27))  # Go's os.ModeDir, os.ModeSymlink

    async def _kill_marked(self, marker: str) -> None:
        """Kill one command's processes by the marker in their environment; when the engine does
        not manage it in time, or one hid from the marker, kill the whole container instead."""

        def kill() -> bool:
            api = client().api
            try:
                exec_id = api.exec_create(
                    self.container_id, ["sh", "-c", KILL_MARKED, f"{MARKER_VAR}={marker}"], user="0"
                )["Id"]
                api.exec_start(exec_id)
                return api.exec_inspect(exec_id).get("ExitCode") == 0
            except docker_errors().APIError as exc:
                logger.warning("could not kill a command's processes: %s", exc)
                return False

        try:
            killed = await asyncio.wait_for(asyncio.to_thread(kill), _ENGINE_KILL_SECS)
        except TimeoutError:
            killed = False
        if not killed:
            await asyncio.to_thread(self._kill_all)

    # --- files ------------------------------------------------------------
    def _absolute(self, path: str) -> str:
        if not path.startswith("/"):
            path = self.workdir.rstrip("/") + "/" + path
        return posixpath.normpath(path).replace("//", "/")

    def _host(self, path: str) -> str | None:
        """The path of a bound path relative to the attempt's folder on the host (opened there
        with safefs, never through a link); None for the container's own paths."""
        for top in BOUND:
            if path == top or path.startswith(top + "/"):
                return path.lstrip("/")
        return None

    async def read_file(self, path, limit=None):
        path = self._absolute(path)
        host = self._host(path)
        if host is not None:
            try:
                return await asyncio.to_thread(safefs.read, self.folder, host, limit)
            except safefs.LinkRefused:  # a link the agent made: resolve it as the container sees it
                pass
        return await asyncio.to_thread(self._read_container, path, limit)

    async def file_size(self, path):
        path = self._absolute(path)
        host = self._host(path)
        if host is not None:
            try:
                return await asyncio.to_thread(safefs.size, self.folder, host)
            except safefs.LinkRefused:
                pass
        return len(await self.read_file(path))

    def _read_container(self, path: str, limit: int | None, depth: int = 0) -> bytes:
        """Read through the engine, which resolves every link inside the container's own root."""
        try:
            chunks, _ = client().api.get_archive(self.container_id, path)
        except docker_errors().NotFound:
            raise FileNotFoundError(path) from None
        with tarfile.open(fileobj=_ChunkReader(chunks), mode="r|") as tar:
            member = tar.next()
            if member is None:
                raise FileNotFoundError(path)
            if member.issym():
                if depth > 8:
                    raise FileNotFoundError(path)
                target = posixpath.normpath(posixpath.join(posixpath.dirname(path), member.linkname))
                return self._read_container(target, limit, depth + 1)
            if member.isdir():
                raise IsADirectoryError(path)
            if not member.isreg():
                raise FileNotFoundError(f"{path}: not a regular file")
            return tar.extractfile(member).read(-1 if limit is None else limit)

    async def write_files(self, files):
        inside = []
        for path, content, executable in files:
            path = self._absolute(path)
            host = self._host(path)
            if host is None:
                inside.append((path, content, executable))
            else:
                await asyncio.to_thread(safefs.write, self.folder, host, content, 0o755 if executable else 0o644)
        if inside:
            await asyncio.to_thread(self._put, inside)

    def _put(self, files: list[tuple[str, bytes, bool]]) -> None:
        buffer = io.BytesIO()
        now = time.time()
        with tarfile.open(fileobj=buffer, mode="w") as tar:
            for path, content, executable in files:
                info = tarfile.TarInfo(path.lstrip("/"))
                info.size, info.mode, info.mtime = len(content), 0o755 if executable else 0o644, now
                tar.addfile(info, io.BytesIO(content))
        try:
            client().api.put_archive(self.container_id, "/", buffer.getvalue())
        except docker_errors().APIError as exc:
            raise PermissionError(f"{files[0][0]}: cannot write into the container: {exc.explanation or exc}") from None

    async def remove_path(self, path):
        path = self._absolute(path)
        host = self._host(path)
        if host is not None:
            await asyncio.to_thread(safefs.remove, self.folder, host, path in BOUND)
            return
        if path == "/":
            raise PermissionError("/: cannot remove the container's root")
        result = await self.exec(f"rm -rf -- {shlex.quote(path)}", cwd="/")
        if result.exit_code != 0:
            raise PermissionError(f"{path}: {result.stderr.decode(errors='replace').strip()}")

    async def list_files(self, folder):
        folder = self._absolute(folder)
        host = self._host(folder)
        if host is not None:
            return [folder.rstrip("/") + "/" + name for name in await asyncio.to_thread(safefs.walk, self.folder, host)]
        return await asyncio.to_thread(self._list_container, folder)

    def _list_container(self, folder: str) -> list[str]:
        try:
            chunks, _ = client().api.get_archive(self.container_id, folder.rstrip("/") + "/.")
        except docker_errors().NotFound:
            return []
        with tarfile.open(fileobj=_ChunkReader(chunks), mode="r|") as tar:
            names = [m.name for m in tar if m.isreg()]
        base = folder.rstrip("/")
        return sorted(base + "/" + name.split("/", 1)[1] for name in names if "/" in name)


#: Tries at removing a container: the engine refuses a removal that races its own handling
#: of the container's death (a kill through the cgroup it has not seen yet) with a conflict.
REMOVE_TRIES = (0.0, 0.2, 1.0, 3.0)


def _remove(container_id: str, folder: Path | None, network_id: str = "") -> None:
    try:
        for pause in REMOVE_TRIES if container_id else ():
            time.sleep(pause)
            try:
                client().api.remove_container(container_id, force=True, v=True)
                break
            except docker_errors().NotFound:
                break
            except docker_errors().APIError as exc:
                logger.warning("could not remove container %s (will try again): %s", container_id[:12], exc)
    finally:
        try:
            if network_id:
                _remove_network(client().api, network_id)
        finally:
            if folder is not None:
                shutil.rmtree(folder, ignore_errors=True)


def _remove_network(api, network_id: str) -> bool:
    """Remove an attempt's network, and first any container still on it: only that attempt's
    containers ever join it, and the attempt is over (its verifier's may still be on its way
    out in another thread). True once it is gone."""
    failure = None
    for pause in REMOVE_TRIES:
        time.sleep(pause)
        try:
            for container_id in api.inspect_network(network_id).get("Containers") or {}:
                with contextlib.suppress(docker_errors().APIError):  # being removed already: tried again
                    api.remove_container(container_id, force=True, v=True)
            api.remove_network(network_id)
            return True
        except docker_errors().NotFound:
            return True
        except docker_errors().APIError as exc:  # a container still leaving it: tried again
            failure = exc
    logger.warning("could not remove network %s: %s", network_id[:12], failure)
    return False


#: Where attempts' networks take their ranges: one /28 each (the gateway, the verifier, the
#: service and room to spare), drawn at random from the shared address space of RFC 6598,
#: not from the engine's pools (about 30 networks in all by default). No address of it is
#: ever on the host (inhibit_ipv4), so no range adds a route there or hides one.
_SUBNETS = ipaddress.ip_network("100.64.0.0/10")
_SUBNET_PREFIX = 28
#: Draws before giving up: two live attempts share a range with odds of 1 in 262,144.
_SUBNET_TRIES = 8


def _attempt_subnet() -> tuple[str, str]:
    """A /28 of _SUBNETS at random, and its first address (the gateway no one holds)."""
    count = 2 ** (_SUBNET_PREFIX - _SUBNETS.prefixlen)
    start = int(_SUBNETS.network_address) + secrets.randbelow(count) * 2 ** (32 - _SUBNET_PREFIX)
    return f"{ipaddress.ip_address(start)}/{_SUBNET_PREFIX}", str(ipaddress.ip_address(start + 1))


def _image_command(image: str) -> list[str]:
    """What the image runs when started as it is (ENTRYPOINT then CMD); [] when nothing."""
    config = client().api.inspect_image(image).get("Config") or {}
    return [*(config.get("Entrypoint") or ()), *(config.get("Cmd") or ())]


class _Stream:
    """A command's output, read by a thread of its own and handed to the event loop as it comes."""

    def __init__(self, on_output):
        self.on_output = on_output
        #: Set when nobody reads any more: the reading thread stops at its next chunk.
        self.closed = False
        self.chunks = {"stdout": [], "stderr": []}
        self.sizes = {"stdout": 0, "stderr": 0}

    def start(self, open_stream) -> asyncio.Future:
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue = asyncio.Queue()

        def post(item) -> None:
            try:
                loop.call_soon_threadsafe(queue.put_nowait, item)
            except RuntimeError:  # the loop is closed: nobody waits for this command any more
                pass

        def pump():
            try:
                for out, err in open_stream():
                    if self.closed:
                        return
                    for name, chunk in (("stdout", out), ("stderr", err)):
                        if chunk:
                            post((name, chunk))
                post(None)
            except Exception as exc:  # the engine went away mid-command
                post(exc)

        threading.Thread(target=pump, daemon=True, name="hemra-docker-exec").start()
        return asyncio.ensure_future(self._drain(queue))

    async def _drain(self, queue: asyncio.Queue) -> None:
        while (item := await queue.get()) is not None:
            if isinstance(item, Exception):
                raise SandboxError(f"lost the command's output stream: {item}")
            name, chunk = item
            if self.on_output is not None:
                await self.on_output(name, chunk)
            if self.sizes[name] < MAX_OUTPUT_BYTES:
                self.chunks[name].append(chunk[: MAX_OUTPUT_BYTES - self.sizes[name]])
            self.sizes[name] += len(chunk)

    def close(self) -> None:
        self.closed = True

    def data(self, name: str) -> bytes:
        return b"".join(self.chunks[name])
