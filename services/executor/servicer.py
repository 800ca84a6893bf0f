"""ExecutorService over gRPC: what this executor is doing."""

from hemra.services.environments.capabilities import ENFORCES
from hemra.v1 import executor_service_pb2 as epb
from hemra.v1 import executor_service_pb2_grpc as epb_grpc


class ExecutorServicer(epb_grpc.ExecutorServiceServicer):
    def __init__(self, worker):
        self.worker = worker

    async def GetExecutorStatus(self, request, context):
        worker = self.worker
        return epb.GetExecutorStatusResponse(
            worker=worker.deps.worker,
            concurrency=worker.concurrency,
            active_attempts=sorted(worker.active),
            completed_jobs=worker.completed,
            sandboxes=sorted(ENFORCES),
        )
