"""ImporterService over gRPC: translates and delegates to the import pipeline (pipeline.py)."""

from hemra.services.importer import pipeline
from hemra.v1 import importer_service_pb2 as ipb
from hemra.v1 import importer_service_pb2_grpc as ipb_grpc


class ImporterServicer(ipb_grpc.ImporterServiceServicer):
    def __init__(self, store, planner):
        self.store = store
        self.planner = planner

    async def ImportResults(self, request, context):
        imported = await pipeline.import_results(
            self.store,
            self.planner,
            request.path,
            request.label,
            request.swebench_version,
            request.tasks_dir,
            request.folder if request.HasField("folder") else None,
        )
        return ipb.ImportResultsResponse(import_id=imported.import_id, warnings=imported.warnings)
