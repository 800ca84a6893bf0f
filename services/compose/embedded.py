"""The embedded shape: every service in this process, each behind its own gRPC server on
loopback (the embedded default). Each `hemra` command and the tests use it; `hemra serve` too
(compose/service.py). The command's own clients call those servers over real gRPC channels;
the services call each other in process (services/common/inprocess.py: the same contracts,
roles, deadlines and errors, without the loopback hop): the executor the store and the
scorer, the scorer the store and the executor's harness protocol. That hop, some twenty
times a trial, was a third of what a short trial cost above its sandbox's commands
(bench/README.md).

Services still authenticate each other: with one fresh random token (every role), made per
process, unless a caller (hemra serve) passes the deployment's credentials. Every server here
accepts all of them, and the process's own clients call as the admin (the deployment's own
services, on the machine whose paths they are).
"""

import contextlib
import secrets
from dataclasses import dataclass, field
from pathlib import Path

import grpc

from hemra.services.common import auth, errors, inprocess, transport

LOOPBACK = "127.0.0.1:0"
#: Every service `services()` can start (the store always is).
SERVICES = ("store", "planner", "importer", "scorer")


@dataclass
class Embedded:
    home: Path
    credentials: auth.Credentials
    addresses: dict[str, str]
    store: transport.Client = None
    planner: transport.Client = None
    scorer: transport.Client = None
    importer: transport.Client = None
    #: Services in this process (the CLI's other kind is a deployment: clients/cli/connect.py).
    remote = False
    #: The store this process serves and its loopback server's health (store_in_process).
    local_store: object = None
    store_health: object = None
    #: Its StoreSettings: the database and blob folder it serves (http_processes.py reads them).
    store_settings: object = None
    #: The scorer this process serves and its server's health, when it serves one.
    scorer_servicer: object = None
    scorer_health: object = None
    _store_servicer: object = None
    _servers: list[grpc.aio.Server] = field(default_factory=list)
    _channels: list[grpc.aio.Channel] = field(default_factory=list)

    @property
    def token(self) -> str:
        """What this process's clients present: the admin's token."""
        return self.credentials.token(auth.ADMIN)

    def channel(self, service: str) -> grpc.aio.Channel:
        channel = transport.channel(self.addresses[service])
        self._channels.append(channel)
        return channel

    async def start(self, name: str, server: grpc.aio.Server, port: int) -> None:
        await transport.start(server)
        self._servers.append(server)
        self.addresses.setdefault(name, f"127.0.0.1:{port}")

    def store_in_process(self, role: str) -> transport.Client:
        """A store client calling this process's store servicer directly, as `role`, with the
        contract of the gRPC one (services/common/inprocess.py): no loopback hop."""
        from hemra.services.store import db
        from hemra.services.store.servicer import StoreServicer

        if self._store_servicer is None:
            self._store_servicer = StoreServicer(self.local_store)
        return inprocess.store(self._store_servicer, role, translate=db.as_outage, health=self.store_health)

    async def start_executor(self, concurrency: int, run_id: str = "", **options):
        """An executor working the queue (only `run_id`'s jobs when given): a Worker. It calls
        the store and the scorer in process when this process serves them (over their
        channels otherwise), and the scorer calls its harness protocol in process."""
        from hemra.services.executor.server import build_executor

        role = auth.SENDS["executor"]
        store = self.store if self.local_store is None else self.store_in_process(role)
        scorer = self.scorer
        if self.scorer_servicer is not None:
            scorer = inprocess.scorer(self.scorer_servicer, role, self.scorer_health)
        server, port, worker, harness = build_executor(
            store,
            scorer,
            self.home,
            concurrency,
            LOOPBACK,
            run_id=run_id,
            credentials=self.credentials,
            **options,
        )
        await self.start("executor", server, port)
        if self.scorer_servicer is not None:
            self.scorer_servicer.serve_locally(worker.deps.harness_address, harness)
        return worker

    async def stop(self) -> None:
        for server in reversed(self._servers):
            await transport.stop(server, grace=1)
        for channel in self._channels:
            await channel.close()


@contextlib.asynccontextmanager
async def services(
    home: Path,
    database_url: str | None = None,
    credentials: auth.Credentials | None = None,
    store_listen: str = LOOPBACK,
    store_tls: tuple[bytes, bytes] | None = None,
    only: tuple[str, ...] = SERVICES,
):
    """Start the store and the other services `only` names (all by default); stop them on exit.
    A command that only reads starts the store alone: nothing else is imported or started, and
    a SQLite store that is not there is refused rather than created (with its folders).

    `store_listen` lets remote workers reach the store (hemra serve); everything
    else stays on 127.0.0.1 with a free port. `credentials`: what every server here accepts
    (default: one fresh token for every role).
    """
    from hemra.services.store.server import build_server as build_store

    store, settings = await _open_store(home, database_url, only)
    embedded = Embedded(home, credentials or auth.Credentials.single(secrets.token_urlsafe(32)), {})
    embedded.store_settings = settings
    closing = []  # servicers closed once their servers stop
    try:
        server, port = build_store(store, LOOPBACK, embedded.credentials)
        await embedded.start("store", server, port)
        embedded.local_store, embedded.store_health = store, server.health
        if store_listen != LOOPBACK:
            server, port = build_store(store, store_listen, embedded.credentials, store_tls)
            await embedded.start("store_public", server, port)
        embedded.store = transport.store(embedded.channel("store"), embedded.token)
        await _start_others(embedded, home, only, closing)
        yield embedded
    finally:
        await embedded.stop()
        for servicer in closing:
            await servicer.close()
        await store.close()


async def _open_store(home: Path, database_url: str | None, only: tuple[str, ...]):
    """The store the settings name, and the settings. A command that only reads is refused a
    SQLite file that is not there (HEMRA_HOME's own is made by any command)."""
    from hemra.services.store import db
    from hemra.services.store.service import Store
    from hemra.services.store.settings import StoreSettings

    settings = StoreSettings.from_env(database_url, home).check()
    # HEMRA_HOME's own store may be made by any command (a first `hemra runs` lists nothing);
    # one a URL names is not: a mistyped path would get an empty database, and its folders.
    reads = only == ("store",) and not settings.in_home
    missing = db.missing_sqlite_file(settings.database_url) if reads else ""
    if missing:
        raise errors.NotFound(
            f"{settings.source}: no store at {missing}: nothing has been recorded there yet "
            "(this command creates none; hemra run or hemra import records the first)"
        )
    return await Store.open(settings.database_url, settings.blob_dir), settings


async def _start_others(embedded: Embedded, home: Path, only: tuple[str, ...], closing: list) -> None:
    """The services besides the store that `only` names, each with its client on `embedded`;
    the scorer's servicer is added to `closing` (closed after its server stops)."""
    if "planner" in only or "importer" in only:  # the importer plans through the planner
        from hemra.services.planner.server import build_server as build_planner

        await embedded.start("planner", *build_planner(embedded.store, home, LOOPBACK, embedded.credentials))
        embedded.planner = transport.planner(embedded.channel("planner"), embedded.token)
    if "importer" in only:
        from hemra.services.importer.server import build_server as build_importer

        importer = build_importer(embedded.store, embedded.planner, LOOPBACK, embedded.credentials)
        await embedded.start("importer", *importer)
        embedded.importer = transport.importer(embedded.channel("importer"), embedded.token)
    if "scorer" in only:
        from hemra.services.scorer.server import build_server as build_scorer

        store = embedded.store_in_process(auth.SENDS["scorer"])
        server, port, scorer_servicer = build_scorer(store, LOOPBACK, embedded.credentials)
        closing.append(scorer_servicer)
        await embedded.start("scorer", server, port)
        embedded.scorer = transport.scorer(embedded.channel("scorer"), embedded.token)
        embedded.scorer_servicer, embedded.scorer_health = scorer_servicer, server.health
