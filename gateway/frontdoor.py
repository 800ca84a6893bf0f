"""The gateway's gRPC front door: how the `hemra` CLI reaches a deployment (HEMRA_SERVER).

One authenticated port (a user's token on every call, TLS when given a certificate) that
forwards the calls a user's commands make to the service that answers them: runs are planned
by the planner, imports read by the importer, everything else read from the store. Who may
call what is services/common/access.py's table, enforced by the server's token interceptor
(services/common/auth.py): a caller here is a user whatever token it holds, so what only workers and
the deployment's own services may do (claim jobs, record results, restore rows) is refused.
Calls go upstream with the gateway's own user token, so each service checks the table again.
A request naming a path on the server is refused unless the gateway was started with
HEMRA_ALLOW_SERVER_PATHS=1 (a user sends contents). Requests pass through as
bytes, parsed only for the RPCs whose requests may name a path. The HTTP API stays read-only;
this is the only way in that writes.
"""

import logging
import os

import grpc

from hemra.services.common import access, auth, transport

logger = logging.getLogger(__name__)

#: Which upstream answers each service.
UPSTREAM = {
    "hemra.v1.PlannerService": "planner",
    "hemra.v1.ImporterService": "importer",
    "hemra.v1.ScorerService": "scorer",
    "hemra.v1.StoreService": "store",
}
#: Who a caller of the front door is, whatever token it holds.
ROLE = access.USER


class FrontDoor(grpc.GenericRpcHandler):
    """Forwards what access.RULES lets a user call to `channels[UPSTREAM[service]]` with `token`
    (a user's); the caller's own token and role were checked by the server's interceptor before
    this runs. `allow_server_paths`: forward requests naming paths on the server too."""

    def __init__(self, channels: dict[str, grpc.aio.Channel], token: str, allow_server_paths: bool = False):
        self._channels = channels
        self._metadata = (("authorization", f"Bearer {token}"),)
        self._allow_server_paths = allow_server_paths
        self._handlers: dict[str, grpc.RpcMethodHandler] = {}

    def service(self, handler_call_details):
        method = handler_call_details.method
        if method not in access.RULES or method.lstrip("/").partition("/")[0] not in UPSTREAM:
            return None  # UNIMPLEMENTED, as for a method that does not exist
        if method not in self._handlers:
            self._handlers[method] = self._forwarder(method)
        return self._handlers[method]

    def _forwarder(self, method: str) -> grpc.RpcMethodHandler:
        rule = access.check(method, ROLE)  # the interceptor refused whatever a user may not call
        service = method.lstrip("/").partition("/")[0]
        if UPSTREAM[service] not in self._channels:  # a gateway started without this service's address
            return grpc.unary_unary_rpc_method_handler(_unavailable(UPSTREAM[service]))
        # No (de)serializers: requests and responses pass through as bytes.
        upstream = self._channels[UPSTREAM[service]].unary_unary(method)
        check_paths = rule.server_paths is not None and not self._allow_server_paths

        async def forward(request: bytes, context: grpc.aio.ServicerContext) -> bytes:
            if check_paths:  # raised here, answered by the server's error boundary (transport.py)
                access.check_paths(method, rule, request)
            remaining = context.time_remaining()
            try:
                return await upstream(request, metadata=self._metadata, timeout=remaining)
            except grpc.aio.AioRpcError as exc:
                # The upstream's status, message and error details (the client's error class) as they are.
                trailing = tuple(exc.trailing_metadata() or ())
                await context.abort(exc.code(), exc.details() or "", trailing_metadata=trailing)

        return grpc.unary_unary_rpc_method_handler(forward)


def _unavailable(name: str):
    async def refuse(request: bytes, context: grpc.aio.ServicerContext) -> bytes:
        await context.abort(grpc.StatusCode.UNAVAILABLE, f"this deployment's gateway was started without --{name}")

    return refuse


def allow_server_paths_from_env() -> bool:
    """HEMRA_ALLOW_SERVER_PATHS: "1" allows users to name paths on the server, "0" or unset does not."""
    value = os.environ.get(access.ALLOW_SERVER_PATHS_ENV, "").strip()
    if value not in ("", "0", "1"):
        raise ValueError(f"{access.ALLOW_SERVER_PATHS_ENV}={value[:40]!r}: expected 1 (allow) or 0 (refuse)")
    return value == "1"


def build_front_door(
    channels: dict[str, grpc.aio.Channel],
    credentials: auth.Credentials | str,
    listen: str,
    tls: tuple[bytes, bytes] | None = None,
    allow_server_paths: bool | None = None,
) -> tuple[grpc.aio.Server, int]:
    """The front door's server (not started) and the port it bound. Callers must present a user's
    token of `credentials` (a token alone: the deployment's one token), and are users whatever
    else the token is; calls go upstream with the first. `allow_server_paths` (default:
    HEMRA_ALLOW_SERVER_PATHS) forwards requests naming paths on the server."""
    if allow_server_paths is None:
        allow_server_paths = allow_server_paths_from_env()
    if allow_server_paths:
        logger.warning(
            "front door: requests naming paths on the server are forwarded (%s=1)", access.ALLOW_SERVER_PATHS_ENV
        )
    if isinstance(credentials, str):
        credentials = auth.Credentials.single(credentials)
    users = credentials.only(ROLE)
    server = transport.new_server(users, tuple(UPSTREAM))
    server.add_generic_rpc_handlers((FrontDoor(channels, users.token(ROLE), allow_server_paths),))
    return server, transport.bind(server, listen, tls)
