"""The sandbox interface every kind implements. What each kind enforces is plain data in
services/environments/capabilities.py; its failures are SandboxError (services/environments)."""

import abc
import asyncio
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from hemra.services.environments.errors import SandboxError


@dataclass
class ExecResult:
    exit_code: int
    stdout: bytes
    stderr: bytes
    timed_out: bool
    duration: float


#: async (stream name, chunk) -> None
OutputSink = Callable[[str, bytes], Awaitable[None]]


#: The most of a task service's output kept (its end), as the attempt's `service` output events.
MAX_SERVICE_OUTPUT = 1024 * 1024


class Sandbox(abc.ABC):
    """A private view of the task's paths (/app, /logs, /tests, /solution) for one attempt."""

    #: Requirements it enforces (checked at resolve against a run's `require`).
    enforces: frozenset[str] = frozenset()
    #: A fresh sandbox's paths that `fresh` left empty because the agent had replaced the
    #: folder with something else (a link, a file): the verifier scores what is left.
    not_carried: list[str] | tuple[str, ...] = ()
    #: A fresh sandbox's network beyond none (verifier.network = "bridge": the network, the
    #: task's service and its command), recorded in the attempt's verifier_sandbox event.
    network_note: dict | None = None

    @abc.abstractmethod
    async def prepare(self) -> None:
        """Set up the environment (workdir, env, copied files).

        Raises:
          SandboxError: when the environment cannot be set up.
        """

    @abc.abstractmethod
    async def exec(
        self,
        command: str,
        cwd: str = "",
        env: dict[str, str] | None = None,
        timeout: float | None = None,
        stdin: bytes = b"",
        on_output: "OutputSink | None" = None,
    ) -> ExecResult:
        """Run `bash -c command` inside; the whole process tree dies at the timeout.

        With `on_output`, each chunk of output is also handed over as it arrives
        (`await on_output("stdout" | "stderr", chunk)`), for drivers that turn a
        long-running agent's stream into events while it runs.

        Raises:
          SandboxError: when the command could not be started.
        """

    @abc.abstractmethod
    async def read_file(self, path: str, limit: int | None = None) -> bytes:
        """The file's content, at most `limit` bytes of it (read no further: a file may be huge).

        Never follows a symbolic link out of the sandbox's root: a link the agent planted is
        resolved inside the sandbox (as the agent would see it) or refused.

        Raises FileNotFoundError when absent, PermissionError outside readable paths."""

    async def file_size(self, path: str) -> int:
        """The size of a regular file, without reading it (FileNotFoundError when absent)."""
        return len(await self.read_file(path))

    @abc.abstractmethod
    async def write_files(self, files: list[tuple[str, bytes, bool]]) -> None:
        """(path, content, executable) each; folders are created. PermissionError outside writable paths."""

    @abc.abstractmethod
    async def remove_path(self, path: str) -> None:
        """Remove a file or folder tree; no error when absent."""

    @abc.abstractmethod
    async def list_files(self, folder: str) -> list[str]:
        """Every file under `folder` (absolute sandbox paths), [] when absent."""

    @abc.abstractmethod
    async def kill(self) -> None:
        """Kill everything running inside at once (cancel, timeout)."""

    @abc.abstractmethod
    async def stop_processes(self) -> None:
        """Kill every process still alive inside (whatever the harness left behind, however it
        hid: a new session, a cleared environment, a renamed binary) and check that none is
        left, keeping the files. Called when the harness phase ends, before the verifier's
        inputs are placed, and again after the verifier, before artifacts are collected.

        Raises:
          SandboxError: when a process survives (the attempt must not be scored).
        """

    async def reopen(self) -> None:  # noqa: B027 (optional: most kinds run commands after a stop as they are)
        """Make the sandbox run commands again after `stop_processes`, for the verifier's turn
        in the agent's own sandbox (shared isolation).

        Raises:
          AgentFault: when what the agent left keeps it from running anything (a container
            whose workdir the agent replaced with a file cannot start again).
          SandboxError: when it cannot for any other reason.
        """

    def reserve_fresh(self, carry: list[str]) -> None:  # noqa: B027 (optional: most kinds do nothing)
        """Say, before `prepare`, that `fresh(carry)` will be called: a kind that can make the
        fresh sandbox ahead, while the harness works, may start it then. Nothing by default."""

    async def fresh(self, carry: list[str]) -> "Sandbox":
        """A new sandbox of the same task environment (prepared), holding only the folders
        in `carry` copied over from this one as plain data: regular files, folders and
        symbolic links (kept as links, never followed); devices, FIFOs and sockets are
        dropped. A path the agent replaced with a link or a file is left empty there and
        named in the new sandbox's `not_carried`: never followed, never an error.
        Called after `stop_processes`, for `[verifier] isolation = "fresh"`. The caller tears
        both down.

        Raises:
          SandboxError: when this kind cannot make one (the planner refuses such runs).
        """
        raise SandboxError(f"{type(self).__name__} cannot make a fresh sandbox for the verifier")

    async def service_output(self) -> bytes:
        """What the task's service beside this (fresh) verifier's sandbox printed so far, its
        last MAX_SERVICE_OUTPUT bytes at most (verifier.network = "bridge"); b"" without one."""
        return b""

    async def oom_kills(self) -> int:
        """How many processes the task's memory limit has killed so far (0 where it is not enforced)."""
        return 0

    def relay_usage(self) -> dict | None:
        """The usage HEMRA's model relay read itself in the harness's model calls so far (see
        relayusage.Observed), kept after the relay closed; None where nothing was relayed."""
        relay = getattr(self, "relay", None)
        return relay.usage() if relay is not None else None

    @abc.abstractmethod
    async def teardown(self) -> None:
        """Remove everything the sandbox left behind. Safe to call twice."""


async def discard(spare: asyncio.Future) -> None:
    """Tear down a verifier's sandbox made ahead (reserve_fresh) that is not used, or that
    failed to be made (its error was the verifier's to see, and there is no verifier)."""
    made = (await asyncio.gather(spare, return_exceptions=True))[0]
    if isinstance(made, Sandbox):
        await made.teardown()


#: Removals still running: a teardown hands the slow part (a folder tree, a container) to a
#: thread of its own and does not wait, since the attempt's result is kept already and the
#: next attempt need not wait. The threads are not daemons: the process finishes them before
#: it exits; after kill -9 the next executor sweeps what is left (workdirs, remove_orphans).
_removals: set[threading.Thread] = set()


def remove_later(removal: Callable[..., None], *args, name: str = "hemra-remove") -> None:
    """Run `removal(*args)` in a background thread."""

    def run():
        try:
            removal(*args)
        finally:
            _removals.discard(threading.current_thread())

    thread = threading.Thread(target=run, name=name)
    _removals.add(thread)
    thread.start()


def wait_for_removals(timeout: float | None = None) -> None:
    """Block until every background removal of this process has finished."""
    for thread in list(_removals):
        thread.join(timeout)
