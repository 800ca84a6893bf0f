"""Build the scorer's gRPC server."""

import grpc

from hemra.v1 import scorer_service_pb2_grpc as scpb_grpc
from services import rpc
from services.scorer.servicer import ScorerServicer


def build_server(store, listen: str = "127.0.0.1:0", token: str = "") -> tuple[grpc.aio.Server, int, ScorerServicer]:
    server = rpc.new_server(token)
    servicer = ScorerServicer(store)
    scpb_grpc.add_ScorerServiceServicer_to_server(servicer, server)
    return server, rpc.bind(server, listen), servicer
