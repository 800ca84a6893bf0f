"""Build the executor: its gRPC server (ExecutorService and the harness protocol) and its worker."""

import os
import socket
import threading
from pathlib import Path
from typing import NamedTuple

import grpc

from hemra.services.common import auth, transport
from hemra.services.executor import attempt, sandboxes, workdirs
from hemra.services.executor.protocol import Grants, HarnessServicer
from hemra.services.executor.servicer import ExecutorServicer
from hemra.services.executor.taskcache import TaskCache
from hemra.services.executor.workdirs import own_work_root
from hemra.services.executor.worker import Worker, worker_name
from hemra.v1 import executor_service_pb2 as epb
from hemra.v1 import executor_service_pb2_grpc as epb_grpc
from hemra.v1 import harness_service_pb2_grpc as hpb_grpc

#: A job's lease; a worker that stops heartbeating loses its jobs after this long.
LEASE_SECS = 30.0
#: Heartbeats carry cancellation, so they come often (at most a third of the lease).
HEARTBEAT_SECS = 2.0


def lease_settings() -> tuple[float, float]:
    """(lease, heartbeat) seconds; HEMRA_LEASE_SECS shortens the lease (faster recovery, more writes)."""
    lease = float(os.environ.get("HEMRA_LEASE_SECS") or LEASE_SECS)
    return lease, min(HEARTBEAT_SECS, lease / 3)


def advertised_host(listen: str) -> str:
    """The host the scorer reaches this executor's harness protocol at: the listener's own,
    or for a wildcard (0.0.0.0, ::) this machine's address by its name, as the system's
    hosts file gives it (in a container: its address on the container network)."""
    host, _ = transport.split_listen(listen)
    if host not in ("0.0.0.0", "::", ""):
        return host
    try:
        return socket.gethostbyname(socket.gethostname())
    except OSError:
        return "127.0.0.1"


class Executor(NamedTuple):
    """What build_executor makes: the server (not started), its port, the worker that works
    the queue once run, and the harness protocol's servicer the server serves (a scorer in the
    same process calls it in process: services/compose)."""

    server: grpc.aio.Server
    port: int
    worker: Worker
    harness: HarnessServicer


def build_executor(
    store,
    scorer,
    home: Path,
    concurrency: int,
    listen: str = "127.0.0.1:0",
    run_id: str = "",
    lease_secs: float | None = None,
    heartbeat_secs: float | None = None,
    credentials: auth.Credentials | str = "",
    pool: str = "",
) -> Executor:
    """The server (not started), its port, the worker that works the queue once run, and the
    harness protocol's servicer.

    The harness protocol on it is served to harnesses with per-attempt tokens;
    ExecutorService needs a token of `credentials` when they are given.
    """
    workdirs.remove_orphans(home)
    # The engine's SDK blocks, so the sweep has a thread of its own and serving does not wait
    # for it; not a daemon: an executor stopped soon after its restart still finishes it.
    threading.Thread(target=sandboxes.remove_orphans, name="hemra-orphans").start()
    default_lease, default_heartbeat = lease_settings()
    lease_secs, heartbeat_secs = lease_secs or default_lease, heartbeat_secs or default_heartbeat
    server = transport.new_server(credentials, (epb.DESCRIPTOR.services_by_name["ExecutorService"].full_name,))
    port = transport.bind(server, listen)
    host = advertised_host(listen)
    grants = Grants()
    deps = attempt.Deps(
        store=store,
        scorer=scorer,
        cache=TaskCache(home / "cache" / "tasks", store),
        grants=grants,
        work_root=own_work_root(home),
        harness_address=f"{host}:{port}",
        worker=worker_name(),
        lease_secs=lease_secs,
        heartbeat_secs=heartbeat_secs,
    )
    worker = Worker(deps, concurrency, run_id, pool)
    harness = HarnessServicer(grants)
    epb_grpc.add_ExecutorServiceServicer_to_server(ExecutorServicer(worker), server)
    hpb_grpc.add_HarnessServiceServicer_to_server(harness, server)
    return Executor(server, port, worker, harness)
