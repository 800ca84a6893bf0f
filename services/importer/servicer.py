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
            # The store writes each batch of files while the next is read and the records are
            # built; the import is recorded once every blob is stored.
            batches: asyncio.Queue = asyncio.Queue()
            upload = asyncio.create_task(record.upload(self.store, batches))
            try:
                results, entries = await _read_into(batches, root, request.swebench_version)
                tasks_dir = Path(request.tasks_dir).resolve() if request.tasks_dir else None
                pinned = await record.pin_tasks(self.planner, results, root, tasks_dir)
                plan = await asyncio.to_thread(record.build_request, results, root, request.label or root.name,
                                               entries, pinned)
            except BaseException:
                upload.cancel()
                await asyncio.gather(upload, return_exceptions=True)
                raise
            await upload
        except ImportProblem as exc:
            raise ServiceError(str(exc), grpc.StatusCode.INVALID_ARGUMENT) from None
        response = await self.store.RecordRun(plan)
        return ipb.ImportResultsResponse(import_id=response.run.id, warnings=results.warnings)


async def _read_into(batches: asyncio.Queue, root: Path, swebench_version: str):
    """_read in a thread, its files put in `batches` as they are read, then None."""
    loop = asyncio.get_running_loop()
    try:
        return await asyncio.to_thread(_read, root, swebench_version,
                                       lambda files: loop.call_soon_threadsafe(batches.put_nowait, files))
    finally:
        # After every batch: the thread's call_soon_threadsafe calls all ran before it returned.
        batches.put_nowait(None)


def _read(root: Path, swebench_version: str, batches):
    """The results and every file of the folder (each file read once, handed to `batches`)."""
    if swebench.looks_like(root):
        return swebench.read_run(root, swebench_version), read_tree(root, batches)
    if swebench_version:
        raise ImportProblem(f"{root}: --swebench-version given but no SWE-bench run report is there")
    if harbor.looks_like(root):
        entries = read_tree(root, batches)
        return harbor.read_job(root, entries), entries
    raise ImportProblem(f"{root}: neither a Harbor job directory (config.json, result.json, trial folders), "
                        f"a SWE-bench run (a run report JSON and logs/run_evaluation/) nor a HEMRA export")
