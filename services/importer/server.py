"""Build the importer's gRPC server."""

import grpc

from hemra.v1 import importer_service_pb2_grpc as ipb_grpc
from services import rpc
from services.importer.servicer import ImporterServicer


def build_server(listen: str = "127.0.0.1:0", token: str = "") -> tuple[grpc.aio.Server, int]:
    server = rpc.new_server(token)
    ipb_grpc.add_ImporterServiceServicer_to_server(ImporterServicer(), server)
    return server, rpc.bind(server, listen)
