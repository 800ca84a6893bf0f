"""The Docker sandbox's container: made, started, killed and removed."""

import asyncio
import shutil
import time
from pathlib import Path

from hemra.services.environments.capabilities import ENFORCES
from hemra.services.environments.engine import LABEL_ATTEMPT, client, docker_errors, limits
from hemra.services.environments.images import LABEL_TASK, ensure_image
from hemra.services.executor.sandboxes.base import Sandbox, SandboxError, discard, remove_later
from hemra.services.executor.sandboxes.docker import cgroups, network
from hemra.services.executor.sandboxes.docker.cleanup import process_labels, remove
from hemra.services.executor.sandboxes.docker.commands import Commands
from hemra.services.executor.sandboxes.docker.files import BOUND, Files
from hemra.services.executor.sandboxes.docker.verifier import SERVICE, Verifier
from hemra.services.executor.sandboxes.relay import Relay

_LOG_DIRS = ("logs/agent", "logs/verifier", "logs/artifacts")


class DockerSandbox(Verifier, Commands, Files, Sandbox):
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
        if self.network != "none":
            self.enforces = ENFORCES["docker"] - {"network_block"}
        self._init_state()
        #: The only way out of a closed container: to the harness's model endpoints (relay.py).
        #: A container on the host's network reaches them itself (and the relay could not
        #: listen on their ports there).
        self.relay = Relay(endpoints if self.network != "host" and not self.network.startswith("container:") else ())

    def _init_state(self) -> None:
        """What changes as the container lives: none of it is made yet."""
        #: The attempt's network, made by the agent's sandbox ("" without one).
        self.network_id = ""
        #: The task's service beside the verifier (bridge), torn down with the verifier's container.
        self.service: DockerSandbox | None = None
        #: The service's command once started, or why it did not start.
        self.command: list[str] = []
        self.not_started = ""
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

    def _create_network(self) -> None:
        """The attempt's network (network.create), removed here when the attempt was torn down meanwhile."""
        self.network_id = network.create(self.attempt_id, self.task.digest)
        if self._torn_down:  # cancelled meanwhile: nothing will remove it but this thread
            network_id, self.network_id = self.network_id, ""
            remove("", None, network_id)

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
                labels={LABEL_ATTEMPT: self.attempt_id, LABEL_TASK: self.task.digest, **process_labels()},
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
                remove(container_id, None)
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
        self._cgroup = cgroups.of(api.inspect_container(self.container_id)["State"].get("Pid") or 0)

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
        if self._cgroup is not None and cgroups.kill(self._cgroup):
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
            and cgroups.procs(self._cgroup)
            or self._cgroup is None
            and client().api.inspect_container(self.container_id)["State"].get("Running")
        ):
            if time.monotonic() > deadline:
                raise SandboxError(f"container {self.container_id[:12]}: processes survived the kill")
            time.sleep(0.01)

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
            remove_later(remove, container_id, self.folder, network_id, name="hemra-docker-rm")

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
