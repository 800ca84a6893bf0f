"""What every service and client shares: the error tree and the transport (gRPC channels,
servers, the call policy). Nothing here imports a service; everything may import this."""
