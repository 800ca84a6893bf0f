"""The HostSandbox's life cycle: its folders made and filled from the task, the verifier's
fresh sandbox (made while the harness works), the kill of its commands and its teardown."""

import asyncio
import os
import shutil
import time
from pathlib import Path

from hemra.services.environments.capabilities import ENFORCES
from hemra.services.executor.processes import running
from hemra.services.executor.sandboxes import safefs
from hemra.services.executor.sandboxes.base import Sandbox, SandboxError, discard, remove_later
from hemra.services.executor.sandboxes.host.bwrap import Bwrap
from hemra.services.executor.sandboxes.host.commands import Commands, children, kill_command
from hemra.services.executor.sandboxes.host.files import Files, copy_into, open_to_others, remove_folder
from hemra.services.executor.sandboxes.host.users import attempt_owner, etc_files, unlock_uid
from hemra.services.executor.sandboxes.relay import Relay

#: Folders every attempt gets, bound read-write from the attempt folder.
_BASE_DIRS = ("/logs/agent", "/logs/verifier", "/logs/artifacts", "/tests", "/solution", "/tmp", "/root")


class HostSandbox(Files, Commands, Bwrap, Sandbox):
    enforces = ENFORCES["host"]

    def __init__(
        self,
        attempt_id: str,
        task,
        task_dir: Path,
        work_root: Path,
        mounts: dict[str, str] | None = None,
        endpoints=None,
        network: str = "",
    ):
        self.attempt_id = attempt_id
        self.task = task
        self.task_dir = task_dir
        self.work_root = work_root
        self.folder = work_root / attempt_id
        self.root = self.folder / "root"
        #: Files bound over the host's /etc ones (passwd, group, hosts); outside the agent's reach.
        self.etc = self.folder / "etc"
        self.workdir = task.environment.workdir or "/"
        self.env = dict(task.environment.env)
        self.mounts = dict(mounts or {})
        #: "host": the commands share the host's network (no relay needed, no network_block).
        self.network = network or "none"
        if self.network == "host":
            self.enforces = ENFORCES["host"] - {"network_block"}
        self.relay = Relay(endpoints if self.network != "host" else (), "host")
        #: The model relay serves the harness phase only; stop_processes ends it.
        self._relay_allowed = True
        self.owner, self._uid_lock = attempt_owner()
        self._processes: set[asyncio.subprocess.Process] = set()
        self.not_carried: list[str] = []
        #: The verifier's sandbox (reserve_fresh): True until prepare starts making it.
        self._spare: bool | asyncio.Future | None = None

    async def prepare(self) -> None:
        await self.relay.open()  # first: /etc/hosts names its listeners
        await asyncio.to_thread(self._prepare_all)
        if self._spare is not None:  # the verifier's sandbox is made while the harness works
            self._spare = asyncio.ensure_future(self._spare_sandbox())

    def reserve_fresh(self, carry: list[str]) -> None:
        self._spare = True  # what to carry is copied over by fresh()

    async def _spare_sandbox(self) -> "HostSandbox":
        # A uid of its own: nothing the agent's user left running or made may touch the verifier's.
        other = HostSandbox(
            f"{self.attempt_id}-verifier", self.task, self.task_dir, self.work_root, network=self.network
        )
        try:
            await other.prepare()
        except BaseException:
            await other.teardown()
            raise
        return other

    def _prepare_all(self) -> None:
        self._prepare_files()
        self._write_etc()

    def _prepare_files(self) -> None:
        if self.folder.exists():
            shutil.rmtree(self.folder)
        self.root.mkdir(parents=True)
        self.folder.chmod(0o700)  # no other user of the host walks into an attempt's files
        self.etc.mkdir()
        self._make_dirs()
        environment = (self.task_dir / "environment").resolve()
        for copy in self.task.environment.copies:
            source = (environment / copy.source).resolve()
            # A task's copy reads its own folder, never a host path through '..' or a link.
            if source != environment and environment not in source.parents:
                raise SandboxError(f"task copy {copy.source!r}: outside the task's environment folder")
            copy_into(
                source,
                self.host_path(copy.destination.rstrip("/") or "/", for_write=True),
                copy.destination.endswith("/"),
            )
        if self.owner is not None:
            for top in os.listdir(self.root):
                safefs.chown_tree(self.root, top, self.owner)
            for host in self.mounts.values():
                open_to_others(Path(host))

    def _make_dirs(self) -> None:
        for path in (*_BASE_DIRS, self.workdir):
            try:
                safefs.make_folders(self.root, path, self.owner)
            except (safefs.LinkRefused, NotADirectoryError):  # a carried link stays one
                pass

    def _write_etc(self) -> None:
        if self.relay.extra_hosts():
            (self.etc / "hosts").write_text(self.relay.hosts())
        if self.owner is None:
            return
        for name, text in etc_files(self.owner).items():
            (self.etc / name).write_text(text)

    async def kill(self):
        for process in list(self._processes):
            kill_command(process)

    async def stop_processes(self) -> None:
        """Each command is a PID namespace of its own, whose processes the kernel kills when its
        init (bwrap's) dies: kill every command still running, and wait until each namespace's
        init is gone."""
        self._relay_allowed = False
        processes = list(self._processes)
        inits = [init for process in processes for init in children(process.pid)]
        for process in processes:
            kill_command(process)
        deadline = time.monotonic() + 10
        for process in processes:
            try:
                await asyncio.wait_for(process.wait(), max(deadline - time.monotonic(), 0.1))
            except TimeoutError:
                raise SandboxError(f"sandbox {self.attempt_id}: bubblewrap {process.pid} survived its kill") from None
        while any(running(*init) for init in inits):
            if time.monotonic() > deadline:
                raise SandboxError(f"sandbox {self.attempt_id}: a command's processes survived the kill")
            await asyncio.sleep(0.01)
        await self.relay.close()

    async def fresh(self, carry: list[str]) -> "HostSandbox":
        spare, self._spare = self._spare, None
        other = await (spare if isinstance(spare, asyncio.Future) else self._spare_sandbox())

        def copy():
            for path in carry:
                rel = self._own(path)
                if rel is None:
                    raise SandboxError(f"{path}: not a folder of the attempt's own to carry over")
                try:
                    safefs.copy_tree(self.root, rel, other.root, rel, other.owner)
                except (safefs.LinkRefused, NotADirectoryError):  # a folder on its way is the agent's link
                    other.not_carried.append(path)
            other._make_dirs()  # a carried folder that was gone leaves none; the workdir must be

        try:
            await asyncio.to_thread(copy)
        except BaseException:
            await other.teardown()
            raise
        return other

    async def teardown(self):
        spare, self._spare = self._spare, None
        if isinstance(spare, asyncio.Future):  # made for a verifier that never ran
            await discard(spare)
        await self.kill()
        await self.relay.close()
        remove_later(remove_folder, self.folder, name="hemra-host-rm")
        lock, self._uid_lock = self._uid_lock, None
        if lock is not None:
            unlock_uid(self.owner[0], lock)
