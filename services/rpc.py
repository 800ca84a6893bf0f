"""What every service's gRPC server shares: server construction, error mapping, logging."""

import functools
import ipaddress
import logging

import grpc
from google.protobuf import any_pb2, descriptor_pb2, descriptor_pool, message_factory

from services.store import errors as store_errors

logger = logging.getLogger(__name__)

#: Generous message limits: task files and artifacts travel as blobs.
MAX_MESSAGE_BYTES = 256 * 1024 * 1024
CHANNEL_OPTIONS = [
    ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
    ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
]
#: Servers never share a port: with SO_REUSEPORT a second server on a taken
#: port would start quietly and split the clients between two stores.
SERVER_OPTIONS = CHANNEL_OPTIONS + [("grpc.so_reuseport", 0)]


class ServiceError(Exception):
    """An error a servicer reports with a specific status code."""

    code = grpc.StatusCode.INTERNAL

    def __init__(self, message: str, code: grpc.StatusCode | None = None):
        super().__init__(message)
        if code is not None:
            self.code = code


_STATUS = {
    store_errors.NotFound: grpc.StatusCode.NOT_FOUND,
    store_errors.InvalidArgument: grpc.StatusCode.INVALID_ARGUMENT,
    store_errors.FailedPrecondition: grpc.StatusCode.FAILED_PRECONDITION,
    store_errors.LeaseLost: grpc.StatusCode.ABORTED,
    store_errors.Unavailable: grpc.StatusCode.UNAVAILABLE,
}


#: google.rpc.Status and google.rpc.ErrorInfo, the standard rich error model, in a private pool
#: (googleapis-common-protos is not a dependency; the wire format is all that matters).
_POOL = descriptor_pool.DescriptorPool()
_POOL.AddSerializedFile(any_pb2.DESCRIPTOR.serialized_pb)
_FILE = descriptor_pb2.FileDescriptorProto(name="hemra/private/google_rpc.proto", package="google.rpc",
                                           syntax="proto3", dependency=["google/protobuf/any.proto"])
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
    detail = _Any(type_url="type.googleapis.com/google.rpc.ErrorInfo",
                  value=ErrorInfo(reason=reason, domain=ERROR_DOMAIN).SerializeToString())
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


def reason_of(exc: Exception) -> str:
    """A store error's reason (e.g. LEASE_LOST), else ""."""
    return getattr(exc, "reason", "") if isinstance(exc, store_errors.StoreError) else ""


def status_of(exc: Exception) -> grpc.StatusCode | None:
    if isinstance(exc, ServiceError):
        return exc.code
    # An error another service returned (clients.rpc.RpcError) keeps its status.
    if isinstance(getattr(exc, "code", None), grpc.StatusCode):
        return exc.code
    for cls, code in _STATUS.items():
        if isinstance(exc, cls):
            return code
    return None


#: An error message travels in a gRPC trailer (16 KiB at most, with its details): longer ones are cut.
MAX_ERROR_CHARS = 2000


def handle_errors(method):
    """Map domain exceptions to status codes at the servicer boundary (one table, one place)."""

    @functools.wraps(method)
    async def wrapper(self, request, context):
        try:
            return await method(self, request, context)
        except grpc.aio.AbortError:
            raise
        except Exception as exc:  # the boundary: everything becomes a status
            code = status_of(exc)
            if code is None:
                logger.exception("unexpected error in %s", method.__name__)
                first_line = (str(exc).splitlines() or [""])[0][:300]
                code, message = grpc.StatusCode.INTERNAL, f"internal error: {type(exc).__name__}: {first_line}"
            else:
                message = str(exc)
            if len(message) > MAX_ERROR_CHARS:  # e.g. a 100,000-character reference quoted back
                message = message[:MAX_ERROR_CHARS] + "..."
            reason = reason_of(exc)
            if reason:
                await context.abort(code, message, trailing_metadata=(
                    (DETAILS_KEY, status_details(code, message, reason)),))
            await context.abort(code, message)

    return wrapper


def new_server(token: str = "") -> grpc.aio.Server:
    """A server that, given a token, refuses calls without it (see services/auth.py)."""
    from services.auth import TokenInterceptor

    interceptors = [TokenInterceptor(token)] if token else []
    return grpc.aio.server(options=SERVER_OPTIONS, interceptors=interceptors)


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
