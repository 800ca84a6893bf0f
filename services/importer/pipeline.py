"""The import pipeline: detect the format of a folder, read it, keep every file, record one
import (or restore a HEMRA export). The servicer only translates and delegates here."""

import asyncio
from dataclasses import dataclass, field
from pathlib import Path

from hemra.services.bulk import gc_paused
from hemra.services.common.settings import hemra_home
from hemra.services.domain import folders, harbor
from hemra.services.domain.importerrors import ImportProblem
from hemra.services.domain.tree import read_tree
from hemra.services.importer import exports, record, swebench
from hemra.v1 import common_pb2 as pb


@dataclass
class Imported:
    import_id: str
    warnings: list[str] = field(default_factory=list)


async def import_results(
    store,
    planner,
    path: str,
    label: str = "",
    swebench_version: str = "",
    tasks_dir: str = "",
    folder: pb.SentFolder | None = None,
) -> Imported:
    """Import the folder at `path` through `store` (tasks pinned through `planner`), or the
    folder sent as blobs from the caller's machine (written back under HEMRA_HOME first)."""
    source, name = "", ""
    if folder is not None:
        path, source = str(await folders.receive(store, folder, hemra_home() / "cache" / "folders")), folder.ref
        name = folder.name
    with gc_paused():  # every file and trial of a big job as objects at once
        return await _import(store, planner, path, label, swebench_version, tasks_dir, source, name, folder is not None)


async def _import(
    store,
    planner,
    path: str,
    label: str,
    swebench_version: str,
    tasks_dir: str,
    source: str = "",
    name: str = "",
    sent: bool = False,
) -> Imported:
    """`name`: the sent folder's own name (the default label); `sent`: a caller sent the folder."""
    root = Path(path).resolve()
    if not root.is_dir():
        raise ImportProblem(f"{path}: no such folder")
    who = record.who_imports(sent)
    if exports.looks_like(root):  # an export keeps its own label unless given one
        return Imported(await exports.restore(store, root, label, source, who))
    label = label or name or root.name
    # The store writes each batch of files while the next is read and the records are
    # built; the import is recorded once every blob is stored.
    batches: asyncio.Queue = asyncio.Queue()
    upload = asyncio.create_task(folders.upload_blobs(store, batches))
    try:
        results, entries = await _read_into(batches, root, swebench_version)
        tasks = Path(tasks_dir).resolve() if tasks_dir else None
        pinned = await record.pin_tasks(planner, results, root, tasks)
        plan = await asyncio.to_thread(record.build_request, results, root, label, entries, pinned, source, who)
    except BaseException:
        upload.cancel()
        await asyncio.gather(upload, return_exceptions=True)
        raise
    await upload
    response = await store.RecordRun(plan)
    return Imported(response.run.id, list(results.warnings))


async def _read_into(batches: asyncio.Queue, root: Path, swebench_version: str):
    """_read in a thread, its files put in `batches` as they are read, then None."""
    loop = asyncio.get_running_loop()
    try:
        return await asyncio.to_thread(
            _read, root, swebench_version, lambda files: loop.call_soon_threadsafe(batches.put_nowait, files)
        )
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
    raise ImportProblem(
        f"{root}: neither a Harbor job directory (config.json, result.json, trial folders), "
        f"a SWE-bench run (a run report JSON and logs/run_evaluation/) nor a HEMRA export"
    )
