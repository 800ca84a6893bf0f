"""The worker shape (`hemra worker`): an executor on this machine working a shared store's
queue, with a scorer of its own; both listen on loopback and take the worker's token, and
every call to the store presents it."""

import contextlib
from collections.abc import Awaitable, Callable
from pathlib import Path

from hemra.services.common import auth, transport
from hemra.services.compose.embedded import LOOPBACK


@contextlib.asynccontextmanager
async def worker(
    address: str,
    ca: bytes | None,
    credentials: auth.Credentials,
    home: Path,
    concurrency: int,
    pool: str,
    check: Callable[[transport.Client], Awaitable[None]] | None = None,
):
    """The executor's Worker (not yet running) against the store at `address` (TLS with `ca`),
    its servers stopped and channels closed on exit. `check`: awaited first with a store
    client that does not ride out an outage, so a wrong address or token fails at once."""
    channel = transport.channel(address, ca)
    token = credentials.token(auth.WORKER)
    try:
        if check is not None:
            await check(transport.store(channel, token))
        from hemra.services.executor.server import build_executor, lease_settings
        from hemra.services.scorer.server import build_server as build_scorer

        # Reached once, the store is ridden out when it restarts (the check above fails at once).
        store = transport.store(channel, token, ride_out=lease_settings()[0])
        # Its own scorer and harness protocol, on loopback, take the worker's token.
        scorer_server, scorer_port, scorer_servicer = build_scorer(store, LOOPBACK, credentials)
        await transport.start(scorer_server)
        scorer_channel = transport.channel(f"127.0.0.1:{scorer_port}")
        scorer = transport.scorer(scorer_channel, token)
        server, _, worker_ = build_executor(
            store, scorer, home, concurrency, LOOPBACK, credentials=credentials, pool=pool
        )
        await transport.start(server)
        try:
            yield worker_
        finally:
            await transport.stop(server, grace=1)
            await transport.stop(scorer_server, grace=1)
            await scorer_servicer.close()
            await scorer_channel.close()
    finally:
        await channel.close()
