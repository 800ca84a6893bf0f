"""The embedded default: every service in this process, on loopback, over real gRPC channels."""

import contextlib
from dataclasses import dataclass, field
from pathlib import Path

import grpc

from clients import rpc as clients
from services.executor.server import build_executor
from services.executor.worker import Worker
from services.importer.server import build_server as build_importer
from services.planner.server import build_server as build_planner
from services.scorer.server import build_server as build_scorer
from services.store.server import build_server as build_store
from services.store.service import Store
from services.store.settings import StoreSettings

LOOPBACK = "127.0.0.1:0"


@dataclass
class Embedded:
    home: Path
    store: clients.Client
    planner: clients.Client
    scorer: clients.Client
    addresses: dict[str, str]
    _servers: list[grpc.aio.Server] = field(default_factory=list)
    _channels: list[grpc.aio.Channel] = field(default_factory=list)

    def channel(self, service: str) -> grpc.aio.Channel:
        channel = clients.channel(self.addresses[service])
        self._channels.append(channel)
        return channel

    async def start_executor(self, concurrency: int, run_id: str = "", **options) -> Worker:
        """An executor working the queue (only `run_id`'s jobs when given)."""
        server, port, worker = build_executor(self.store, self.scorer, self.home, concurrency, LOOPBACK,
                                              run_id=run_id, **options)
        await server.start()
        self._servers.append(server)
        self.addresses.setdefault("executor", f"127.0.0.1:{port}")
        return worker


@contextlib.asynccontextmanager
async def services(home: Path, database_url: str | None = None):
    """Start store, planner, scorer and importer on 127.0.0.1:0; stop them on exit."""
    settings = StoreSettings.from_env(database_url, home)
    store = await Store.open(settings.database_url, settings.blob_dir)
    servers, addresses = [], {}
    embedded = None
    try:
        server, port = build_store(store, LOOPBACK)
        servers.append(server)
        addresses["store"] = f"127.0.0.1:{port}"
        await server.start()
        store_channel = clients.channel(addresses["store"])
        store_client = clients.store(store_channel)
        for name, (server, port) in (("planner", build_planner(store_client, home, LOOPBACK)),
                                     ("importer", build_importer(LOOPBACK))):
            servers.append(server)
            addresses[name] = f"127.0.0.1:{port}"
            await server.start()
        server, port, scorer_servicer = build_scorer(store_client, LOOPBACK)
        servers.append(server)
        addresses["scorer"] = f"127.0.0.1:{port}"
        await server.start()
        embedded = Embedded(home, store_client, None, None, addresses, servers, [store_channel])
        embedded.planner = clients.planner(embedded.channel("planner"))
        embedded.scorer = clients.scorer(embedded.channel("scorer"))
        yield embedded
    finally:
        for server in reversed(embedded._servers if embedded else servers):
            await server.stop(grace=1)
        if embedded is not None:
            await scorer_servicer.close()
            for channel in embedded._channels:
                await channel.close()
        await store.close()
