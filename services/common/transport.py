"""The transport every service and client shares: channels and servers with HEMRA's
options, the one error interceptor that turns any exception a servicer raises into a status
with its ErrorInfo reason, the client call policy that turns it back into the same class
(services/common/errors.py), deadlines and retries, and the loopback rule for listeners."""

import asyncio
import ipaddress
import logging
import random
import time

import grpc
from google.protobuf import any_pb2, descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.message import DecodeError

from hemra.services.common import auth, errors, health
from hemra.v1 import (
    executor_service_pb2_grpc,
    harness_service_pb2_grpc,
    importer_service_pb2_grpc,
    planner_service_pb2_grpc,
    scorer_service_pb2_grpc,
    store_service_pb2_grpc,
)

logger = logging.getLogger(__name__)

#: Generous message limits: task files and artifacts travel as blobs.
MAX_MESSAGE_BYTES = 256 * 1024 * 1024
#: A channel whose service went away tries to reconnect at most this far apart: gRPC's default
#: backoff grows to 120 s, so a gateway would go on refusing calls for minutes after the store
#: it forwards to came back from a restart.
MAX_RECONNECT_BACKOFF_MS = 3000
CHANNEL_OPTIONS = [
    ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
    ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
    ("grpc.max_reconnect_backoff_ms", MAX_RECONNECT_BACKOFF_MS),
]
#: Servers never share a port: with SO_REUSEPORT a second server on a taken
#: port would start quietly and split the clients between two stores.
SERVER_OPTIONS = CHANNEL_OPTIONS + [("grpc.so_reuseport", 0)]


#: google.rpc.Status and google.rpc.ErrorInfo, the standard rich error model, in a private pool
#: (googleapis-common-protos is not a dependency; the wire format is all that matters).
_POOL = descriptor_pool.DescriptorPool()
_POOL.AddSerializedFile(any_pb2.DESCRIPTOR.serialized_pb)
_FILE = descriptor_pb2.FileDescriptorProto(
    name="hemra/private/google_rpc.proto",
    package="google.rpc",
    syntax="proto3",
    dependency=["google/protobuf/any.proto"],
)
_error_info = _FILE.message_type.add(name="ErrorInfo")
_error_info.field.add(name="reason", number=1, type=9, label=1)
_error_info.field.add(name="domain", number=2, type=9, label=1)
_status = _FILE.message_type.add(name="Status")
_status.field.add(name="code", number=1, type=5, label=1)
_status.field.add(name="message", number=2, type=9, label=1)
_status.field.add(name="details", number=3, type=11, label=3, type_name=".google.protobuf.Any")
_POOL.Add(_FILE)
ErrorInfo = message_factory.GetMessageClass(_POOL.FindMessageTypeByName("google.rpc.ErrorInfo"))
Status = message_factory.GetMessageClass(_POOL.FindMessageTypeByName("google.rpc.Status"))
_Any = message_factory.GetMessageClass(_POOL.FindMessageTypeByName("google.protobuf.Any"))
#: The trailer gRPC's rich error model travels in.
DETAILS_KEY = "grpc-status-details-bin"
ERROR_DOMAIN = "hemra.dev"


def status_details(code: grpc.StatusCode, message: str, reason: str) -> bytes:
    """A serialized google.rpc.Status whose one detail is an ErrorInfo naming `reason`."""
    detail = _Any(
        type_url="type.googleapis.com/google.rpc.ErrorInfo",
        value=ErrorInfo(reason=reason, domain=ERROR_DOMAIN).SerializeToString(),
    )
    return Status(code=code.value[0], message=message, details=[detail]).SerializeToString()


def error_reason(trailing_metadata) -> str:
    """The ErrorInfo reason of an error's trailing metadata, or "" when it carries none."""
    for key, value in trailing_metadata or ():
        if key == DETAILS_KEY:
            status = Status.FromString(value)
            for detail in status.details:
                if detail.type_url.endswith("/google.rpc.ErrorInfo"):
                    return ErrorInfo.FromString(detail.value).reason
    return ""


#: An error message travels in a gRPC trailer (16 KiB at most, with its details): longer ones are cut.
MAX_ERROR_CHARS = 2000


# --- servers ------------------------------------------------------------------
def status_of(exc: BaseException, method: str) -> tuple[grpc.StatusCode, str, str]:
    """(code, message, reason) for an exception leaving a servicer: a HemraError's own, else
    INTERNAL (logged with its traceback: it is a bug or an outage, never the caller's doing)."""
    if isinstance(exc, errors.HemraError):
        code, message, reason = exc.code, str(exc), errors.shared_class(exc).reason
    else:
        logger.exception("unexpected error in %s", method)
        first_line = (str(exc).splitlines() or [""])[0][:300]
        code, message, reason = grpc.StatusCode.INTERNAL, f"internal error: {type(exc).__name__}: {first_line}", ""
    if len(message) > MAX_ERROR_CHARS:  # e.g. a 100,000-character reference quoted back
        message = message[:MAX_ERROR_CHARS] + "..."
    return code, _one_line(message), reason


def _one_line(message: str) -> str:
    """A refusal is one line even when it quotes a caller's string holding line breaks."""
    return message.translate(_LINE_BREAKS)


_LINE_BREAKS = {
    ord("\n"): "\\n",
    ord("\r"): "\\r",
    0x0B: "\\v",
    0x0C: "\\f",
    0x85: "\\x85",
    0x2028: "\\u2028",
    0x2029: "\\u2029",
}


class ErrorInterceptor(grpc.aio.ServerInterceptor):
    """The servicers' one error boundary: every RPC (all are unary-unary) answers an exception
    with its class's status and ErrorInfo reason. `translate` (a service's own) may first turn an
    exception of its dependencies into one of ours (the store: a database outage is Unavailable)."""

    def __init__(self, translate=None):
        #: method name -> (the servicer's handler, its guarded one): wrapped once, not per call.
        self._guarded: dict[str, tuple] = {}
        self._translate = translate

    async def intercept_service(self, continuation, handler_call_details):
        handler = await continuation(handler_call_details)
        if handler is None or handler.unary_unary is None:
            return handler
        name = handler_call_details.method
        known = self._guarded.get(name)
        if known is None or known[0] is not handler:
            known = self._guarded[name] = (handler, _guard(handler, name, self._translate))
        return known[1]


class _Undecodable:
    """What a request's bytes were when they were no message of the RPC's request type."""

    def __init__(self, error: str):
        self.error = error


def _lenient(deserializer):
    """`deserializer` returning _Undecodable instead of raising: grpc would answer UNKNOWN
    before any handler ran, and a caller's bytes are input like any other."""
    if deserializer is None:
        return None

    def parse(data: bytes):
        try:
            return deserializer(data)
        except DecodeError as exc:
            return _Undecodable(str(exc))

    return parse


def _guard(handler, name: str, translate=None):
    """`handler` with every exception it raises answered as a status."""
    method = handler.unary_unary
    rpc = name.rpartition("/")[2]

    async def guarded(request, context):
        try:
            if isinstance(request, _Undecodable):
                raise errors.InvalidArgument(
                    f"{rpc}: the request's bytes are not this RPC's request message ({request.error})"
                )
            return await method(request, context)
        except grpc.aio.AbortError:
            raise
        except Exception as exc:  # the boundary: everything becomes a status
            code, message, reason = status_of(translate(exc) if translate else exc, name)
            details = ((DETAILS_KEY, status_details(code, message, reason)),) if reason else ()
            await context.abort(code, message, trailing_metadata=details)

    return grpc.unary_unary_rpc_method_handler(
        guarded,
        request_deserializer=_lenient(handler.request_deserializer),
        response_serializer=handler.response_serializer,
    )


def new_server(
    credentials: auth.Credentials | str = "", services: tuple[str, ...] = (), translate=None, interceptors: tuple = ()
) -> grpc.aio.Server:
    """A server whose every call goes through the error boundary (with `translate`, see
    ErrorInterceptor) and, given credentials (a token alone: one token for every role), is let
    in only with a token they hold whose role may call the RPC (services/common/auth.py). It serves
    grpc.health.v1 and reflection for `services` (full names), NOT_SERVING until
    `server.health.serving()` (services/common/health.py). `interceptors` see each call once
    it is let in."""
    if isinstance(credentials, str):
        credentials = auth.Credentials.single(credentials) if credentials else None
    auth_ = [auth.TokenInterceptor(credentials)] if credentials else []
    gate = health.ReadinessGate()
    errors_ = ErrorInterceptor(translate)
    server = grpc.aio.server(options=SERVER_OPTIONS, interceptors=[*auth_, gate, *interceptors, errors_])
    server.health = gate.health = health.Health(server, list(services))
    return server


#: How often a server not yet ready asks again whether it is.
READY_POLL_SECS = 1.0


async def start(server: grpc.aio.Server, ready=None) -> None:
    """Start a server built by new_server. It says SERVING at once, or, given `ready` (an
    async callable answering "" when the server can do its job, else why not), once that
    answers "": until then it is NOT_SERVING with the reason, and its calls UNAVAILABLE."""
    await server.start()
    if ready is None:
        await server.health.serving()
    else:
        server.readiness = asyncio.create_task(_serve_when_ready(server.health, ready))


async def _serve_when_ready(state: health.Health, ready) -> None:
    while True:
        try:
            reason = await ready()
        except Exception as exc:  # a check that fails is a reason, not a crash
            reason = f"{type(exc).__name__}: {exc}"
        if not reason:
            break
        if reason != state.reason:
            logger.info("not ready: %s", reason)
        await state.not_serving(reason)
        await asyncio.sleep(READY_POLL_SECS)
    await state.serving()


async def stop(server: grpc.aio.Server, grace: float) -> None:
    """NOT_SERVING first (probes and callers move on), then stop within `grace` seconds."""
    task = getattr(server, "readiness", None)
    if task is not None:
        task.cancel()
    await server.health.not_serving("shutting down")
    await server.stop(grace=grace)


class NotLoopback(OSError):
    """A listener on an address other machines can reach, without --expose."""


#: Set once by a command given --expose (hemra serve, hemra service): listeners may then
#: bind addresses other than loopback. Nothing else turns it on.
_EXPOSE = False


def allow_exposed() -> None:
    global _EXPOSE
    _EXPOSE = True


def is_loopback(listen: str) -> bool:
    """Whether `host:port` names a loopback address only ("" or 0.0.0.0 or a hostname do not)."""
    host, _ = split_listen(listen)
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_listen(listen: str, option: str = "--listen") -> None:
    """Refuse an address that is not loopback unless --expose allowed it."""
    if not _EXPOSE and not is_loopback(listen):
        raise NotLoopback(f"{option} {listen} is not a loopback address; add --expose to allow it")


def bind(server: grpc.aio.Server, listen: str, tls: tuple[bytes, bytes] | None = None) -> int:
    """Bind `host:port` (port 0 picks a free one) and return the port. `tls` is (key, cert) PEM.
    Every service's listener comes here: an address other than loopback needs allow_exposed()."""
    check_listen(listen)
    try:
        if tls is None:
            port = server.add_insecure_port(listen)
        else:
            port = server.add_secure_port(listen, grpc.ssl_server_credentials([tls]))
    except RuntimeError as exc:
        raise OSError(f"cannot listen on {listen}: {exc}") from None
    if port == 0:
        raise OSError(f"cannot listen on {listen} (in use?)")
    return port


def split_listen(listen: str) -> tuple[str, int]:
    host, _, port = listen.rpartition(":")
    try:
        return host.strip("[]"), int(port)
    except ValueError:
        raise ValueError(f"{listen!r} is not host:port") from None


# --- clients ------------------------------------------------------------------
DEFAULT_TIMEOUT = 60.0
#: How long a service rides out the store being away (a restart of it or of its database)
#: before the work in hand fails: longer than a restart takes, shorter than a stuck one.
STORE_RIDE_OUT = 60.0
#: Calls that may be repeated safely when the service is briefly unavailable.
#: What a call meets while its service restarts: unavailable, or cancelled by the server on its
#: way down (a call this process cancels raises asyncio.CancelledError, never this).
_GONE = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED)

IDEMPOTENT = {
    "GetRun",
    "ListRuns",
    "GetRunReport",
    "ListAttempts",
    "GetAttempt",
    "GetTask",
    "ListEvents",
    "GetBlobs",
    "PutBlobs",
    "FindMissingBlobs",
    "HeartbeatJob",
    "AppendEvents",  # with first_seq: a repeated batch is not appended twice
    "CompleteJob",
    "GetTrial",
    "ReadFile",
    "ReadFiles",
    "GetExecutorStatus",
    "CancelRun",
    # a repeat finds the trials the first queued (their latest attempt queued) and queues none
    "ResumeRun",
    "RepairRun",
}
#: Calls that may be repeated safely when their request carries a request_id (one the caller
#: made): a repeated one answers what the first made instead of making it again.
IDEMPOTENT_WITH_REQUEST_ID = {"PlanRun"}


def retried(rpc_name: str, request) -> bool:
    """Whether `rpc_name` with `request` may be repeated after its service was unavailable."""
    if rpc_name in IDEMPOTENT:
        return True
    return rpc_name in IDEMPOTENT_WITH_REQUEST_ID and bool(getattr(request, "request_id", ""))


#: How long a call waits on an unavailable service before the Outage says so: a blip (a retry or
#: two) is not worth a line.
NOTICE_AFTER_SECS = 1.0


class Outage:
    """What a client's calls say while they ride out their services being away: ONE line (to
    `say`) when the first of them has waited NOTICE_AFTER_SECS, one when calls answer again, not
    one per retry or per call. `window`: how long each call waits (a Client's ride_out)."""

    def __init__(self, say, window: float):
        self.say = say
        self.window = window
        self._since: float | None = None

    def waiting(self, service: str, exc: grpc.aio.AioRpcError, since: float) -> None:
        now = time.monotonic()
        if self._since is None and now - since >= NOTICE_AFTER_SECS:
            self._since = since
            reason = (exc.details() or "").splitlines()[0:1] or [""]
            self.say(
                f"waiting for {service} ({exc.code().name.lower()}: {reason[0][:200]}), up to {duration(self.window)}"
            )

    def resumed(self, service: str) -> None:
        if self._since is not None:
            self.say(f"{service} answers again after {duration(time.monotonic() - self._since)}; going on")
            self._since = None

    def gave_up(self, service: str, error: errors.HemraError) -> errors.HemraError:
        """The error a call that waited the whole window raises: it says how long it waited."""
        self._since = None
        return errors.Unavailable(f"{service} was unavailable for {duration(self.window)}, giving up: {error}")


def duration(secs: float) -> str:
    """ "45 s", "5 min", "1.5 h": how long, as a line says it."""
    if secs < 120:
        return f"{secs:.0f} s"
    if secs < 7200:
        return f"{secs / 60:.3g} min"
    return f"{secs / 3600:.3g} h"


def error_of(exc: grpc.aio.AioRpcError) -> errors.HemraError:
    """The class the service raised, from the status's reason (or its code)."""
    return errors.from_status(exc.code(), exc.details() or exc.code().name, error_reason(exc.trailing_metadata()))


class Client:
    """One service's stub with our call policy; `client.GetRun(request)` calls the RPC."""

    def __init__(
        self,
        channel: grpc.aio.Channel,
        stub,
        metadata: tuple = (),
        timeout: float = DEFAULT_TIMEOUT,
        retries: int = 5,
        ride_out: float = 0.0,
        outage: Outage | None = None,
        service: str = "the service",
    ):
        """`ride_out`: the least `retry_for` of every idempotent call. A service that must not
        fail its work because another restarted (an executor, the scorer) rides out the store's
        restarts this long; five quick retries (a few seconds) are not long enough for one.
        `outage`: says when calls start and stop waiting for `service` (the remote CLI)."""
        self._stub = stub
        self._metadata = metadata
        self._timeout = timeout
        self._retries = retries
        self._ride_out = ride_out
        self._outage = outage
        self._service = service
        self.channel = channel

    def __getattr__(self, rpc_name: str):
        method = getattr(self._stub, rpc_name)

        async def call(request, timeout: float | None = None, retry_for: float = 0.0):
            """`retry_for`: keep retrying an idempotent call while the service is unavailable for
            up to this many seconds (an executor riding out a store restart within its lease)."""
            again = retried(rpc_name, request)
            attempts = self._retries if again else 1
            started = time.monotonic()
            until = started + max(retry_for, self._ride_out) if again else 0.0
            attempt = 0
            while True:
                try:
                    answer = await method(request, timeout=timeout or self._timeout, metadata=self._metadata)
                except grpc.aio.AioRpcError as exc:
                    attempt += 1
                    if exc.code() not in _GONE or (attempt >= attempts and time.monotonic() >= until):
                        raise self._gave_up(exc, waited=time.monotonic() - started) from None
                    if self._outage is not None:
                        self._outage.waiting(self._service, exc, started)
                    await asyncio.sleep(min(0.1 * 2 ** min(attempt, 10), 2.0) * (0.5 + random.random()))
                else:
                    if self._outage is not None:
                        self._outage.resumed(self._service)
                    return answer

        return call

    def _gave_up(self, exc: grpc.aio.AioRpcError, waited: float) -> errors.HemraError:
        error = error_of(exc)
        if self._outage is not None and exc.code() in _GONE and waited >= NOTICE_AFTER_SECS:
            return self._outage.gave_up(self._service, error)
        return error


def channel(address: str, ca_cert: bytes | None = None) -> grpc.aio.Channel:
    """A channel to `address`; TLS when a CA certificate (PEM) is given."""
    if ca_cert is None:
        return grpc.aio.insecure_channel(address, options=CHANNEL_OPTIONS)
    return grpc.aio.secure_channel(address, grpc.ssl_channel_credentials(ca_cert), options=CHANNEL_OPTIONS)


def store(
    channel: grpc.aio.Channel, token: str = "", ride_out: float = 0.0, retries: int = 5, outage: Outage | None = None
) -> Client:
    stub = store_service_pb2_grpc.StoreServiceStub(channel)
    return Client(
        channel,
        stub,
        metadata=auth.metadata(token),
        retries=retries,
        ride_out=ride_out,
        outage=outage,
        service="the store",
    )


def _user_facing(stub_class, service: str, timeout: float):
    """A factory of clients of a service the remote CLI also calls, so one that may ride out its
    outages (`ride_out`, said once through `outage`)."""

    def make(channel: grpc.aio.Channel, token: str = "", ride_out: float = 0.0, outage: Outage | None = None) -> Client:
        return Client(
            channel,
            stub_class(channel),
            metadata=auth.metadata(token),
            timeout=timeout,
            ride_out=ride_out,
            outage=outage,
            service=service,
        )

    return make


planner = _user_facing(planner_service_pb2_grpc.PlannerServiceStub, "the planner", timeout=600)
#: A verifier may run for its whole timeout; the scorer enforces that itself.
SCORER_TIMEOUT = 24 * 3600
scorer = _user_facing(scorer_service_pb2_grpc.ScorerServiceStub, "the scorer", timeout=SCORER_TIMEOUT)
importer = _user_facing(importer_service_pb2_grpc.ImporterServiceStub, "the importer", timeout=3600)


def executor(channel: grpc.aio.Channel, token: str = "") -> Client:
    return Client(channel, executor_service_pb2_grpc.ExecutorServiceStub(channel), metadata=auth.metadata(token))


#: A harness-protocol call may run a command for as long as its attempt allows.
HARNESS_TIMEOUT = 24 * 3600


def harness_metadata(token: str) -> tuple[tuple[str, str], ...]:
    """What a harness-protocol call carries: its attempt's token (services/executor/protocol.py)."""
    return (("authorization", f"Bearer {token}"),)


def harness(channel: grpc.aio.Channel, token: str) -> Client:
    """The harness protocol, authenticated by the attempt's token."""
    return Client(
        channel,
        harness_service_pb2_grpc.HarnessServiceStub(channel),
        metadata=harness_metadata(token),
        timeout=HARNESS_TIMEOUT,
    )
