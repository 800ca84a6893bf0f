"""grpc.health.v1 and server reflection on every HEMRA server, and the readiness gate.

A server says NOT_SERVING until it can do its job (the store once its schema is at head,
an executor once its sandbox backend answers, the others once started), then SERVING;
on shutdown NOT_SERVING again, so probes and load balancers stop sending it work before
it goes. While NOT_SERVING, calls to its own services are answered UNAVAILABLE with the
reason (clients back off and retry); health, reflection and the harness protocol (which
attempts still running need while an executor drains) are never gated.
"""

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_health.v1.health import aio as health_aio
from grpc_reflection.v1alpha import reflection

SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING
HEALTH_SERVICE = health_pb2.DESCRIPTOR.services_by_name["Health"].full_name
#: The name a liveness probe asks for: SERVING whenever the server answers at all, ready or
#: not, draining or not. Restarting a server that waits for its database or its sandbox
#: backend, or that is handing attempts back, would help nothing (Kubernetes' grpc probes).
LIVENESS = "liveness"
#: Methods no token or readiness gate stands in front of (probes carry no token).
OPEN_PREFIXES = (
    f"/{HEALTH_SERVICE}/",
    "/grpc.reflection.v1alpha.ServerReflection/",
    "/grpc.reflection.v1.ServerReflection/",
)


class _Servicer(health_aio.HealthServicer):
    def __init__(self, names: list[str]):
        super().__init__()
        # Born NOT_SERVING (the library starts the server-wide entry at SERVING).
        self._server_status = dict.fromkeys(names, NOT_SERVING) | {LIVENESS: SERVING}


class Health:
    """One server's health: the server as a whole ("") and each service it serves."""

    def __init__(self, server: grpc.aio.Server, services: list[str]):
        self.services = services
        self.ready = False
        self.reason = "starting"
        self._servicer = _Servicer(["", *services])
        health_pb2_grpc.add_HealthServicer_to_server(self._servicer, server)
        reflection.enable_server_reflection([*services, HEALTH_SERVICE, reflection.SERVICE_NAME], server)

    async def serving(self) -> None:
        self.ready, self.reason = True, ""
        await self._set(SERVING)

    async def not_serving(self, reason: str) -> None:
        self.ready, self.reason = False, reason
        await self._set(NOT_SERVING)

    async def _set(self, status) -> None:
        for name in ["", *self.services]:
            await self._servicer.set(name, status)

    def gates(self, method: str) -> bool:
        return not self.ready and any(method.startswith(f"/{name}/") for name in self.services)


class ReadinessGate(grpc.aio.ServerInterceptor):
    """Answers UNAVAILABLE, with why, for a service's calls while its server is not ready."""

    #: The server's Health, set once it is attached (the server must exist first).
    health: Health | None = None

    async def intercept_service(self, continuation, handler_call_details):
        health = self.health
        method = handler_call_details.method or ""
        if health is None or not health.gates(method):
            return await continuation(handler_call_details)
        reason = health.reason

        async def refuse(request, context):
            await context.abort(grpc.StatusCode.UNAVAILABLE, f"not ready: {reason}")

        # Every method of HEMRA's own services is unary-unary.
        return grpc.unary_unary_rpc_method_handler(refuse)


async def check(address: str, service: str = "", timeout: float = 2.0, ca_cert: bytes | None = None) -> str:
    """The status name a server at `address` reports (what `hemra health` and the compose
    healthchecks ask); raises grpc.aio.AioRpcError when it cannot be asked."""
    from hemra.services.common import transport

    channel = transport.channel(address, ca_cert)
    try:
        stub = health_pb2_grpc.HealthStub(channel)
        response = await stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=timeout)
    finally:
        await channel.close()
    return health_pb2.HealthCheckResponse.ServingStatus.Name(response.status)


async def status(address: str, service: str = "", timeout: float = 2.0) -> str:
    """The status name, or why it could not be asked ("unavailable: failed to connect ...")."""
    try:
        return await check(address, service, timeout)
    except grpc.aio.AioRpcError as exc:
        return f"{exc.code().name.lower()}: {(exc.details() or '').splitlines()[0][:200]}"
