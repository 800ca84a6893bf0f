"""Commands in the container: docker exec, and killing every process one started."""

import asyncio
import logging
import time
import uuid

from hemra.services.domain.blame import AgentFault
from hemra.services.environments.engine import client, docker_errors
from hemra.services.executor.sandboxes.base import ExecResult, SandboxError
from hemra.services.executor.sandboxes.docker.output import Stream

logger = logging.getLogger(__name__)

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


class Commands:
    """DockerSandbox's commands (docker exec)."""

    async def exec(self, command, cwd="", env=None, timeout=None, stdin=b"", on_output=None):
        marker = uuid.uuid4().hex
        argv = ["bash", "-c", command]
        if stdin:
            stdin_path = f"/tmp/.hemra-stdin-{marker}"
            await self.write_files([(stdin_path, stdin, False)])
            argv = ["bash", "-c", 'bash -c "$1" < "$0"; status=$?; rm -f "$0"; exit $status', stdin_path, command]
        started = time.monotonic()
        exec_id = await asyncio.to_thread(self._exec_create, argv, cwd, {**(env or {}), MARKER_VAR: marker})
        stream = Stream(on_output)
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
