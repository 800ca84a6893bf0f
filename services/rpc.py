"""What every service's gRPC server shares: server construction, error mapping, logging."""

import functools
import logging

import grpc

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
            await context.abort(code, message)

    return wrapper


def new_server(token: str = "") -> grpc.aio.Server:
    """A server that, given a token, refuses calls without it (see services/auth.py)."""
    from services.auth import TokenInterceptor

    interceptors = [TokenInterceptor(token)] if token else []
    return grpc.aio.server(options=SERVER_OPTIONS, interceptors=interceptors)


def bind(server: grpc.aio.Server, listen: str, tls: tuple[bytes, bytes] | None = None) -> int:
    """Bind `host:port` (port 0 picks a free one) and return the port. `tls` is (key, cert) PEM."""
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
    return host.strip("[]"), int(port)
