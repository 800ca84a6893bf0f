"""Build the scorer's gRPC server."""

import grpc

from hemra.services.common import auth, transport
from hemra.services.scorer.servicer import ScorerServicer
from hemra.v1 import scorer_service_pb2 as scpb
from hemra.v1 import scorer_service_pb2_grpc as scpb_grpc


def build_server(
    store, listen: str = "127.0.0.1:0", credentials: auth.Credentials | str = ""
) -> tuple[grpc.aio.Server, int, ScorerServicer]:
    server = transport.new_server(credentials, (scpb.DESCRIPTOR.services_by_name["ScorerService"].full_name,))
    servicer = ScorerServicer(store)
    scpb_grpc.add_ScorerServiceServicer_to_server(servicer, server)
    return server, transport.bind(server, listen), servicer
