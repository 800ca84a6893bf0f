"""The verifier's fresh container beside the agent's, and the task's service beside it."""

import asyncio
import os
import posixpath
import tempfile
from typing import TYPE_CHECKING

from hemra.services.environments.engine import client, docker_errors
from hemra.services.executor.sandboxes import safefs
from hemra.services.executor.sandboxes.base import MAX_SERVICE_OUTPUT, SandboxError, discard
from hemra.services.executor.sandboxes.docker.archives import plain_archive

if TYPE_CHECKING:
    from hemra.services.executor.sandboxes.docker.sandbox import DockerSandbox

#: A workspace copied into a fresh container is spooled to disk past this size.
_SPOOL_BYTES = 32 * 1024 * 1024
#: The roles of an attempt's other containers: their names end in them, and on the attempt's
#: network (verifier.network = "bridge") they are its host names: the verifier reaches the
#: task's service as `task`.
VERIFIER, SERVICE = "verifier", "task"


class Verifier:
    """DockerSandbox's handover to the verifier's container."""

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
        return type(self)(
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
        plain data: regular files, folders and links only (see plain_archive)."""
        api = client().api
        try:
            chunks, _ = api.get_archive(self.container_id, path)
        except docker_errors().NotFound:
            return
        with tempfile.SpooledTemporaryFile(max_size=_SPOOL_BYTES) as archive:
            if not plain_archive(chunks, archive):
                other.not_carried.append(path)
                return
            archive.seek(0)
            try:
                api.put_archive(other.container_id, posixpath.dirname(path) or "/", archive)
            except docker_errors().APIError as exc:
                raise SandboxError(
                    f"cannot copy {path} into the verifier's container: {exc.explanation or exc}"
                ) from None


def _image_command(image: str) -> list[str]:
    """What the image runs when started as it is (ENTRYPOINT then CMD); [] when nothing."""
    config = client().api.inspect_image(image).get("Config") or {}
    return [*(config.get("Entrypoint") or ()), *(config.get("Cmd") or ())]
