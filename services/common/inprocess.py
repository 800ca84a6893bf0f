"""A service's servicer called in this process with the contract of a call over gRPC. Services
that share a process call each other this way, without the loopback hop (both ends'
serialising, HTTP/2, the completion queue's wake-ups): `hemra serve`'s HTTP API reads its
store, and in the embedded default the executor calls the store and the scorer, and the scorer
the store and the executor's harness protocol (services/compose/embedded.py). Each goes through
a transport.Client whose stub is a Stub here, so its call policy (deadlines, retries of
idempotent calls, one class per error) is the wire's own. What each call keeps of the wire:

- who may call what: the caller's role is checked against services/common/access.py as the
  token interceptor checks it; a refusal is the PERMISSION_DENIED it answers, with its line.
  The harness protocol's calls carry their attempt's token in their metadata, which its
  servicer checks as it does a received call's;
- readiness: while the service's server is not SERVING, UNAVAILABLE "not ready: <why>";
- errors: whatever the servicer raises becomes the status the ErrorInterceptor would send
  (transport.status_of, after the service's `translate`) and the Client raises it again as it
  does a received one (transport.error_of): the same class and one-line message, INTERNAL for
  anything unexpected;
- nothing shared: the servicer gets its own copy of the request, the caller its own copy of the
  answer (a servicer may answer from a cache, as the store does a settled run's attempts page),
  each serialized and parsed as on the wire: a copy (CopyFrom) would keep a map field's order,
  which the wire's bytes do not, and the HTTP API's JSON would differ. 9 µs for a 2.5 kB report,
  22 µs for a 17 kB attempts page, against about 0.7 ms of CPU the loopback hop cost each;
- the deadline: the call's timeout bounds the servicer's coroutine (asyncio.timeout), which
  then ends as DEADLINE_EXCEEDED "Deadline Exceeded", as gRPC's own deadline does.

Servicers ask their call's context for its metadata at most (the harness protocol's token); a
Context gives that, the time left and abort.
"""

import asyncio

import grpc
from google.protobuf import message_factory

from hemra.services.common import access, errors, transport
from hemra.v1 import harness_service_pb2, scorer_service_pb2, store_service_pb2

#: What gRPC says of a call whose deadline passed.
DEADLINE_DETAILS = "Deadline Exceeded"


def _status(code: grpc.StatusCode, details: str, trailing: tuple = ()) -> grpc.aio.AioRpcError:
    """The error a call over the wire raises for this status (what transport.Client reads)."""
    return grpc.aio.AioRpcError(code, grpc.aio.Metadata(), grpc.aio.Metadata(*trailing), details)


class _Aborted(Exception):
    """A servicer's context.abort: its status, as it would travel."""

    def __init__(self, error: grpc.aio.AioRpcError):
        super().__init__(error.details())
        self.error = error


class Context:
    """The context a servicer's method is called with in process: its call's metadata, the
    time left before its deadline, and abort."""

    def __init__(self, metadata: tuple, deadline: float | None):
        self._metadata = metadata
        self._deadline = deadline

    def invocation_metadata(self) -> tuple:
        return self._metadata

    def time_remaining(self) -> float | None:
        if self._deadline is None:
            return None
        return max(0.0, self._deadline - asyncio.get_running_loop().time())

    async def abort(self, code: grpc.StatusCode, details: str = "", trailing_metadata: tuple = ()):
        raise _Aborted(_status(code, details, tuple(trailing_metadata)))


class _Method:
    """One RPC of a Stub: `await method(request, timeout=..., metadata=...)`, as a stub's."""

    def __init__(self, stub: "Stub", descriptor):
        self._stub = stub
        self._call = getattr(stub.servicer, descriptor.name)
        self._path = f"/{descriptor.containing_service.full_name}/{descriptor.name}"
        self._request_type = message_factory.GetMessageClass(descriptor.input_type)
        self._response_type = message_factory.GetMessageClass(descriptor.output_type)
        try:
            access.check(self._path, stub.role)
            self._refused = ""
        except errors.PermissionDenied as exc:
            self._refused = str(exc)

    async def __call__(self, request, timeout: float | None = None, metadata: tuple = ()):
        if self._refused:  # the token interceptor's refusal: a status without a reason
            raise _status(grpc.StatusCode.PERMISSION_DENIED, self._refused)
        health = self._stub.health
        if health is not None and health.gates(self._path):
            raise _status(grpc.StatusCode.UNAVAILABLE, f"not ready: {health.reason}")
        own = self._request_type.FromString(request.SerializeToString())
        scope = asyncio.timeout(timeout)
        try:
            async with scope:
                context = Context(metadata, scope.when())
                answer = await self._call(own, context)
                return self._response_type.FromString(answer.SerializeToString())
        except _Aborted as aborted:
            raise aborted.error from None
        except Exception as exc:  # the error boundary, as transport.ErrorInterceptor's
            if scope.expired():
                raise _status(grpc.StatusCode.DEADLINE_EXCEEDED, DEADLINE_DETAILS) from None
            raise self._as_status(exc) from None

    def _as_status(self, exc: Exception) -> grpc.aio.AioRpcError:
        translate = self._stub.translate
        code, message, reason = transport.status_of(translate(exc) if translate else exc, self._path)
        details = ((transport.DETAILS_KEY, transport.status_details(code, message, reason)),) if reason else ()
        return _status(code, message, details)


class Stub:
    """A servicer behind the interface of its service's generated stub, called as `role`.
    `translate` and `health` are its server's (transport.new_server, Health)."""

    def __init__(self, servicer, service_descriptor, role: str, translate=None, health=None):
        self.servicer = servicer
        self.role = role
        self.translate = translate
        self.health = health
        self._service = service_descriptor

    def __getattr__(self, rpc_name: str) -> _Method:
        descriptor = self._service.methods_by_name.get(rpc_name)
        if descriptor is None:
            raise AttributeError(f"{self._service.full_name} has no RPC {rpc_name}")
        method = _Method(self, descriptor)
        setattr(self, rpc_name, method)  # found as an attribute from now on
        return method


STORE_SERVICE = store_service_pb2.DESCRIPTOR.services_by_name["StoreService"]
SCORER_SERVICE = scorer_service_pb2.DESCRIPTOR.services_by_name["ScorerService"]
HARNESS_SERVICE = harness_service_pb2.DESCRIPTOR.services_by_name["HarnessService"]


def store(servicer, role: str, translate=None, health=None) -> transport.Client:
    """A store client (as transport.store's) calling `servicer`, a StoreServicer of this
    process, as `role` (e.g. auth.SENDS["gateway"]), with its server's `translate` and `health`."""
    return transport.Client(None, Stub(servicer, STORE_SERVICE, role, translate, health), service="the store")


def scorer(servicer, role: str, health=None) -> transport.Client:
    """A scorer client (as transport.scorer's) calling `servicer`, a ScorerServicer of this process."""
    stub = Stub(servicer, SCORER_SERVICE, role, health=health)
    return transport.Client(None, stub, timeout=transport.SCORER_TIMEOUT, service="the scorer")


def harness(servicer, token: str) -> transport.Client:
    """A harness-protocol client (as transport.harness's) calling `servicer`, an executor's
    HarnessServicer of this process, with the attempt's `token`, which the servicer checks."""
    stub = Stub(servicer, HARNESS_SERVICE, access.HARNESS)
    return transport.Client(None, stub, metadata=transport.harness_metadata(token), timeout=transport.HARNESS_TIMEOUT)
