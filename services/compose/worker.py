"""The worker shape (`hemra worker`): an executor on this machine working a shared store's
queue, with a scorer of its own that it calls in process (services/common/inprocess.py), as
the scorer calls its harness protocol. The harness protocol listens on loopback, for the
harnesses; every call to the store presents the worker's token."""

import contextlib
from collections.abc import Awaitable, Callable
from pathlib import Path

from hemra.services.common import auth, inprocess, transport
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
        from hemra.services.scorer.servicer import ScorerServicer

        # Reached once, the store is ridden out when it restarts (the check above fails at once).
        store = transport.store(channel, token, ride_out=lease_settings()[0])
        scorer_servicer = ScorerServicer(store)
        scorer = inprocess.scorer(scorer_servicer, auth.WORKER)
        server, _, worker_, harness = build_executor(
            store, scorer, home, concurrency, LOOPBACK, credentials=credentials, pool=pool
        )
        scorer_servicer.serve_locally(worker_.deps.harness_address, harness)
        await transport.start(server)
        try:
            yield worker_
        finally:
            await transport.stop(server, grace=1)
            await scorer_servicer.close()
    finally:
        await channel.close()
