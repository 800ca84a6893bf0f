"""ImporterService: detect the format, read it, keep every file, record one import."""

import asyncio
from pathlib import Path

import grpc

from hemra.v1 import importer_service_pb2 as ipb
from hemra.v1 import importer_service_pb2_grpc as ipb_grpc
from services.importer import exports, harbor, record, swebench
from services.importer.errors import ImportProblem
from services.importer.tree import read_tree
from services.bulk import gc_paused
from services.rpc import ServiceError, handle_errors


class ImporterServicer(ipb_grpc.ImporterServiceServicer):
    def __init__(self, store, planner):
        self.store = store
        self.planner = planner

    @handle_errors
    async def ImportResults(self, request, context):
        with gc_paused():  # every file and trial of a big job as objects at once
            return await self._import(request)

    async def _import(self, request) -> ipb.ImportResultsResponse:
        root = Path(request.path).resolve()
        try:
            if not root.is_dir():
                raise ImportProblem(f"{request.path}: no such folder")
            if exports.looks_like(root):
                return ipb.ImportResultsResponse(import_id=await exports.restore(self.store, root))
            results, entries = await asyncio.to_thread(_read, root, request.swebench_version)
        except ImportProblem as exc:
            raise ServiceError(str(exc), grpc.StatusCode.INVALID_ARGUMENT) from None
        # The store writes the blobs while the records are built; they are recorded once
        # every blob is stored.
        upload = asyncio.create_task(record.upload(self.store, entries))
        try:
            tasks_dir = Path(request.tasks_dir).resolve() if request.tasks_dir else None
            pinned = await record.pin_tasks(self.planner, results, root, tasks_dir)
            label = request.label or root.name
            by_path = {e.path: e.digest for e in entries if not e.is_dir}
            plan = await asyncio.to_thread(record.build_request, results, root, label, entries, by_path, pinned)
        finally:
            await upload
        response = await self.store.RecordRun(plan)
        return ipb.ImportResultsResponse(import_id=response.run.id)


def _read(root: Path, swebench_version: str):
    """The results and every file of the folder (each file read once)."""
    if swebench.looks_like(root):
        return swebench.read_run(root, swebench_version), read_tree(root)
    if swebench_version:
        raise ImportProblem(f"{root}: --swebench-version given but no SWE-bench run report is there")
    if harbor.looks_like(root):
        entries = read_tree(root)
        return harbor.read_job(root, entries), entries
    raise ImportProblem(f"{root}: neither a Harbor job directory (config.json, result.json, trial folders), "
                        f"a SWE-bench run (a run report JSON and logs/run_evaluation/) nor a HEMRA export")
