"""Build the planner's gRPC server."""

from pathlib import Path

import grpc

from hemra.services.common import auth, transport
from hemra.services.planner.servicer import PlannerServicer
from hemra.v1 import planner_service_pb2 as ppb
from hemra.v1 import planner_service_pb2_grpc as ppb_grpc


def build_server(
    store,
    home: Path,
    listen: str = "127.0.0.1:0",
    credentials: auth.Credentials | str = "",
    build_images: bool = True,
) -> tuple[grpc.aio.Server, int]:
    """`store` is a hemra.services.common.transport store client: the planner never opens the database.
    Without `build_images` the executors build the task images their engines lack."""
    server = transport.new_server(credentials, (ppb.DESCRIPTOR.services_by_name["PlannerService"].full_name,))
    ppb_grpc.add_PlannerServiceServicer_to_server(PlannerServicer(store, home, build_images), server)
    return server, transport.bind(server, listen)
