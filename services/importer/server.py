"""Build the importer's gRPC server."""

import grpc

from hemra.services.common import auth, transport
from hemra.services.importer.servicer import ImporterServicer
from hemra.v1 import importer_service_pb2 as ipb
from hemra.v1 import importer_service_pb2_grpc as ipb_grpc


def build_server(
    store, planner, listen: str = "127.0.0.1:0", credentials: auth.Credentials | str = ""
) -> tuple[grpc.aio.Server, int]:
    """`store` and `planner` are hemra.services.common.transport clients: the importer never opens the database."""
    server = transport.new_server(credentials, (ipb.DESCRIPTOR.services_by_name["ImporterService"].full_name,))
    ipb_grpc.add_ImporterServiceServicer_to_server(ImporterServicer(store, planner), server)
    return server, transport.bind(server, listen)
