"""Build the store's gRPC server."""

import grpc

from hemra.services.common import auth, transport
from hemra.services.store import db
from hemra.services.store.service import Store
from hemra.services.store.servicer import StoreServicer
from hemra.v1 import store_service_pb2 as spb
from hemra.v1 import store_service_pb2_grpc as spb_grpc


def build_server(
    store: Store,
    listen: str = "127.0.0.1:0",
    credentials: auth.Credentials | str = "",
    tls: tuple[bytes, bytes] | None = None,
    interceptors: tuple = (),
) -> tuple[grpc.aio.Server, int]:
    """The server, not yet started, and the port it bound. With credentials (or one token),
    callers must present a token they hold, of a role that may call the RPC; `interceptors`
    see each call after that check."""
    service = spb.DESCRIPTOR.services_by_name["StoreService"].full_name
    server = transport.new_server(credentials, (service,), translate=db.as_outage, interceptors=interceptors)
    spb_grpc.add_StoreServiceServicer_to_server(StoreServicer(store), server)
    return server, transport.bind(server, listen, tls)
