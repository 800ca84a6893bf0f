"""A deployment in this process for front door tests: real store, planner and importer servers
(hemra.services.compose.embedded) behind a real gateway front door on 127.0.0.1, and clients that reach the
services only through it, as a remote `hemra` command does."""

import contextlib
import json
from dataclasses import dataclass
from pathlib import Path

import grpc

from hemra.gateway.frontdoor import build_front_door
from hemra.services.common import errors, transport
from hemra.services.compose import embedded
from hemra.services.digests import sha256
from hemra.v1 import store_service_pb2 as spb


@dataclass
class Deployment:
    home: Path
    #: The services as the embedded (same-process) client reaches them: directly.
    embedded: embedded.Embedded
    #: The services through the front door.
    store: transport.Client
    planner: transport.Client
    importer: transport.Client
    channel: grpc.aio.Channel
    token: str

    def blob_path(self, digest: str) -> Path:
        return self.home / "blobs" / "sha256" / digest[7:9] / digest[9:]


@contextlib.asynccontextmanager
async def deployment(home: Path, allow_server_paths: bool = False):
    async with embedded.services(home, only=("store", "planner", "importer")) as services:
        channels = {name: services.channel(name) for name in ("store", "planner", "importer")}
        door, port = build_front_door(channels, services.token, "127.0.0.1:0", allow_server_paths=allow_server_paths)
        await transport.start(door)
        channel = transport.channel(f"127.0.0.1:{port}")
        try:
            yield Deployment(
                home,
                services,
                transport.store(channel, services.token, retries=1),
                transport.planner(channel, services.token),
                transport.importer(channel, services.token),
                channel,
                services.token,
            )
        finally:
            await channel.close()
            await transport.stop(door, grace=None)


async def put_listing(store, rows: list[dict], files: tuple[bytes, ...] = ()) -> str:
    """Put `files` and a listing of `rows` (JSON TreeEntry) as blobs; the listing's digest."""
    listing = json.dumps(rows).encode()
    blobs = [spb.Blob(digest=sha256(data), data=data) for data in (*files, listing)]
    await store.PutBlobs(spb.PutBlobsRequest(blobs=blobs))
    return sha256(listing)


def one_line(caught: errors.HemraError, code: str) -> str:
    """The refusal's message, after checking its status code and that it is one line."""
    message = str(caught)
    assert caught.code.name == code, (caught.code.name, message)
    assert "\n" not in message and message, message
    return message
