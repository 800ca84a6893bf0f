"""ImporterService: answers UNIMPLEMENTED until imports land."""

import grpc

from hemra.v1 import importer_service_pb2_grpc as ipb_grpc
from services.rpc import ServiceError, handle_errors


class ImporterServicer(ipb_grpc.ImporterServiceServicer):
    @handle_errors
    async def ImportResults(self, request, context):
        raise ServiceError("imports are not implemented in this version", grpc.StatusCode.UNIMPLEMENTED)
