"""The Python SDK of the harness protocol (protos/hemra/v1/harness_service.proto).

async with HarnessSession.from_env() as session:
    trial = await session.trial()
    result = await session.run("ls /app")
    await session.write_file("/app/answer.txt", b"42\\n")
    await session.finish(completed=True)
"""

import json
import os
import time

from hemra.services.common import transport
from hemra.v1 import common_pb2 as pb
from hemra.v1 import harness_service_pb2 as hpb


class HarnessSession:
    def __init__(self, address: str, token: str):
        self._channel = transport.channel(address)
        self._client = transport.harness(self._channel, token)

    @classmethod
    def from_env(cls) -> "HarnessSession":
        """From HEMRA_HARNESS_ADDRESS and HEMRA_HARNESS_TOKEN, as a program harness gets them."""
        return cls(os.environ["HEMRA_HARNESS_ADDRESS"], os.environ["HEMRA_HARNESS_TOKEN"])

    async def __aenter__(self) -> "HarnessSession":
        return self

    async def __aexit__(self, *exc) -> None:
        await self._channel.close()

    async def trial(self) -> hpb.GetTrialResponse:
        return await self._client.GetTrial(hpb.GetTrialRequest())

    async def run(
        self, command: str, cwd: str = "", env: dict[str, str] | None = None, timeout: float = 0, stdin: bytes = b""
    ) -> hpb.RunCommandResponse:
        request = hpb.RunCommandRequest(command=command, cwd=cwd, env=env or {}, stdin=stdin)
        if timeout:
            request.timeout.FromNanoseconds(int(timeout * 1e9))
        return await self._client.RunCommand(request)

    async def read_file(self, path: str) -> bytes:
        return (await self._client.ReadFile(hpb.ReadFileRequest(path=path))).content

    async def write_file(self, path: str, content: bytes, executable: bool = False) -> None:
        await self._client.WriteFiles(
            hpb.WriteFilesRequest(files=[hpb.FileContent(path=path, content=content, executable=executable)])
        )

    async def remove(self, path: str) -> None:
        await self._client.RemovePath(hpb.RemovePathRequest(path=path))

    async def emit(self, type_: str, name: str = "", **payload) -> None:
        event = pb.Event(type=type_, name=name, payload_json=json.dumps(payload, default=str))
        event.time.FromNanoseconds(time.time_ns())
        await self._client.EmitEvents(hpb.EmitEventsRequest(events=[event]))

    async def finish(self, completed: bool = True, message: str = "", agent_version: str = "") -> None:
        status = hpb.FINISH_STATUS_COMPLETED if completed else hpb.FINISH_STATUS_FAILED
        await self._client.Finish(hpb.FinishRequest(status=status, message=message, agent_version=agent_version))
