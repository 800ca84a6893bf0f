"""The gateway's gRPC front door: how the `hemra` CLI reaches a deployment (HEMRA_SERVER).

One authenticated port (the deployment token on every call, TLS when given a certificate)
that forwards the calls a user's commands make to the service that answers them, bytes as
they are: runs are planned by the planner, imports read by the importer, everything else
read from the store. What only services may do (claim jobs, record results, restore rows)
is not forwarded: a user with the token can submit and cancel work, never write a score.
The HTTP API stays read-only; this is the only way in that writes.
"""

import grpc

from services.common import transport

#: Forwarded methods, by service; None: every method of that service.
ROUTES: dict[str, frozenset[str] | None] = {
    "hemra.v1.PlannerService": None,
    "hemra.v1.ImporterService": None,
    # what `hemra judge` asks (the scorer's other methods are for executors)
    "hemra.v1.ScorerService": frozenset({"JudgeRun"}),
    "hemra.v1.StoreService": frozenset(
        {
            # what `runs`, `show`, `compare`, `export` and `run`'s progress read
            "GetRun",
            "ListRuns",
            "GetRunReport",
            "CompareSides",
            "ListAttempts",
            "GetAttempt",
            "GetTask",
            "ListEvents",
            "ListDatasets",
            "ListTasks",
            "ListHarnesses",
            "ListScorers",
            "ListJudges",
            "GetCriterionTable",
            "ListAttemptUsage",
            "ListHistoryMining",
            "ExportRun",
            "GetBlobs",
            # what `cancel` does, and how folders travel (content-addressed: only missing blobs)
            "CancelRun",
            "FindMissingBlobs",
            "PutBlobs",
        }
    ),
}
#: Which upstream answers each service.
UPSTREAM = {
    "hemra.v1.PlannerService": "planner",
    "hemra.v1.ImporterService": "importer",
    "hemra.v1.ScorerService": "scorer",
    "hemra.v1.StoreService": "store",
}


def forwards(method: str) -> bool:
    """Whether `/package.Service/Method` goes through the front door."""
    service, _, name = method.lstrip("/").partition("/")
    if service not in ROUTES:
        return False
    allowed = ROUTES[service]
    return allowed is None or name in allowed


class FrontDoor(grpc.GenericRpcHandler):
    """Forwards allowed methods to `channels[UPSTREAM[service]]` with the deployment token;
    the caller's own token was checked by the server's interceptor before this runs."""

    def __init__(self, channels: dict[str, grpc.aio.Channel], token: str):
        self._channels = channels
        self._metadata = (("authorization", f"Bearer {token}"),)
        self._handlers: dict[str, grpc.RpcMethodHandler] = {}

    def service(self, handler_call_details):
        method = handler_call_details.method
        if not forwards(method):
            return None  # UNIMPLEMENTED, as for a method that does not exist
        if method not in self._handlers:
            self._handlers[method] = self._forwarder(method)
        return self._handlers[method]

    def _forwarder(self, method: str) -> grpc.RpcMethodHandler:
        service = method.lstrip("/").partition("/")[0]
        if UPSTREAM[service] not in self._channels:  # a gateway started without this service's address
            return grpc.unary_unary_rpc_method_handler(_unavailable(UPSTREAM[service]))
        # No (de)serializers: requests and responses pass through as bytes, never parsed here.
        upstream = self._channels[UPSTREAM[service]].unary_unary(method)

        async def forward(request: bytes, context: grpc.aio.ServicerContext) -> bytes:
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


def build_front_door(
    channels: dict[str, grpc.aio.Channel], token: str, listen: str, tls: tuple[bytes, bytes] | None = None
) -> tuple[grpc.aio.Server, int]:
    """The front door's server (not started) and the port it bound; callers must present `token`."""
    server = transport.new_server(token, tuple(ROUTES))
    server.add_generic_rpc_handlers((FrontDoor(channels, token),))
    return server, transport.bind(server, listen, tls)
