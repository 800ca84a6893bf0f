"""gRPC clients for HEMRA's services: deadlines on every call, status codes turned
back into exceptions, and retries with backoff for idempotent calls only."""

import asyncio
import random

import grpc

from hemra.v1 import executor_service_pb2_grpc, harness_service_pb2_grpc, importer_service_pb2_grpc
from hemra.v1 import planner_service_pb2_grpc, scorer_service_pb2_grpc, store_service_pb2_grpc
from services import auth
from services.rpc import CHANNEL_OPTIONS

DEFAULT_TIMEOUT = 60.0
#: Calls that may be repeated safely when the service is briefly unavailable.
IDEMPOTENT = {"GetRun", "ListRuns", "GetRunReport", "ListAttempts", "GetAttempt", "ListEvents",
              "GetBlobs", "PutBlobs", "FindMissingBlobs", "HeartbeatJob", "CompleteJob", "GetTrial",
              "ReadFile", "GetExecutorStatus", "CancelRun"}


class RpcError(Exception):
    """A service answered with an error status."""

    def __init__(self, code: grpc.StatusCode, message: str):
        super().__init__(message)
        self.code = code


class NotFound(RpcError):
    pass


class InvalidArgument(RpcError):
    pass


class LeaseLost(RpcError):
    pass


class Unavailable(RpcError):
    pass


class Unauthenticated(RpcError):
    pass


class FailedPrecondition(RpcError):
    pass


_ERRORS = {grpc.StatusCode.NOT_FOUND: NotFound, grpc.StatusCode.INVALID_ARGUMENT: InvalidArgument,
           grpc.StatusCode.ABORTED: LeaseLost, grpc.StatusCode.UNAVAILABLE: Unavailable, grpc.StatusCode.UNAUTHENTICATED: Unauthenticated,
           grpc.StatusCode.FAILED_PRECONDITION: FailedPrecondition}


def error_of(exc: grpc.aio.AioRpcError) -> RpcError:
    return _ERRORS.get(exc.code(), RpcError)(exc.code(), exc.details() or exc.code().name)


class Client:
    """One service's stub with our call policy; `client.GetRun(request)` calls the RPC."""

    def __init__(self, channel: grpc.aio.Channel, stub, metadata: tuple = (), timeout: float = DEFAULT_TIMEOUT,
                 retries: int = 5):
        self._stub = stub
        self._metadata = metadata
        self._timeout = timeout
        self._retries = retries
        self.channel = channel

    def __getattr__(self, rpc_name: str):
        method = getattr(self._stub, rpc_name)

        async def call(request, timeout: float | None = None):
            attempts = self._retries if rpc_name in IDEMPOTENT else 1
            for attempt in range(attempts):
                try:
                    return await method(request, timeout=timeout or self._timeout, metadata=self._metadata)
                except grpc.aio.AioRpcError as exc:
                    if exc.code() != grpc.StatusCode.UNAVAILABLE or attempt == attempts - 1:
                        raise error_of(exc) from None
                    await asyncio.sleep(min(0.1 * 2 ** attempt, 2.0) * (0.5 + random.random()))

        return call


def channel(address: str, ca_cert: bytes | None = None) -> grpc.aio.Channel:
    """A channel to `address`; TLS when a CA certificate (PEM) is given."""
    if ca_cert is None:
        return grpc.aio.insecure_channel(address, options=CHANNEL_OPTIONS)
    return grpc.aio.secure_channel(address, grpc.ssl_channel_credentials(ca_cert), options=CHANNEL_OPTIONS)


def store(channel: grpc.aio.Channel, token: str = "") -> Client:
    return Client(channel, store_service_pb2_grpc.StoreServiceStub(channel), metadata=auth.metadata(token))


def planner(channel: grpc.aio.Channel, token: str = "") -> Client:
    return Client(channel, planner_service_pb2_grpc.PlannerServiceStub(channel), metadata=auth.metadata(token),
                  timeout=600)


def scorer(channel: grpc.aio.Channel, token: str = "") -> Client:
    # A verifier may run for its whole timeout; the scorer enforces that itself.
    return Client(channel, scorer_service_pb2_grpc.ScorerServiceStub(channel), metadata=auth.metadata(token),
                  timeout=24 * 3600)


def executor(channel: grpc.aio.Channel, token: str = "") -> Client:
    return Client(channel, executor_service_pb2_grpc.ExecutorServiceStub(channel), metadata=auth.metadata(token))


def importer(channel: grpc.aio.Channel, token: str = "") -> Client:
    return Client(channel, importer_service_pb2_grpc.ImporterServiceStub(channel), metadata=auth.metadata(token),
                  timeout=3600)


def harness(channel: grpc.aio.Channel, token: str) -> Client:
    """The harness protocol, authenticated by the attempt's token."""
    return Client(channel, harness_service_pb2_grpc.HarnessServiceStub(channel),
                  metadata=(("authorization", f"Bearer {token}"),), timeout=24 * 3600)
