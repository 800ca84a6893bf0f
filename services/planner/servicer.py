"""PlannerService over gRPC: resolve with plan.py, upload task files, have the store record."""

import asyncio
import json
from pathlib import Path

from hemra.services.common import runspec
from hemra.services.domain import folders
from hemra.services.domain.harnesses import harness_to_proto
from hemra.services.domain.planerrors import PlanError
from hemra.services.domain.tasks import harbor_content_hash, load_task, task_to_proto
from hemra.services.environments import history
from hemra.services.planner import auditing, convert, images, plan, restore
from hemra.services.planner import datasets as ds
from hemra.v1 import common_pb2 as pb
from hemra.v1 import planner_service_pb2 as ppb
from hemra.v1 import planner_service_pb2_grpc as ppb_grpc
from hemra.v1 import store_service_pb2 as spb

#: Upload task files in batches of about this many bytes.
_BATCH_BYTES = 16 * 1024 * 1024


class PlannerServicer(ppb_grpc.PlannerServiceServicer):
    def __init__(self, store, home: Path, build_images: bool = True):
        self.store = store
        self.home = home
        #: Build docker runs' task images while they resolve (a Dockerfile that fails stops the
        #: run before it is recorded); off where the planner has no Docker engine (Kubernetes).
        self.build_images = build_images

    async def _resolve(self, request_spec, build_images: bool = False) -> plan.Resolved:
        spec = runspec.with_defaults(request_spec)
        base = Path(spec.run_file).parent if spec.run_file else None
        for ref in dict.fromkeys(spec.datasets):  # a pinned copy gone from the cache: from the store
            await restore.ensure(self.store, ref, self.home, base)
        # Reading and hashing task folders is file I/O: keep it off the event loop.
        resolved = await asyncio.to_thread(plan.resolve, spec, self.home, Path.cwd())
        if build_images and spec.sandbox == "docker":
            tasks = list({task.digest: task for _, task, _ in resolved.trials}.values())
            kept = frozenset(resolved.history_kept)
            await asyncio.to_thread(images.build, tasks, spec.sandbox_image, self.home, kept)
        return resolved

    async def _received(self, request_spec: pb.RunSpec, sent) -> tuple[pb.RunSpec, dict[str, pb.SentFolder]]:
        """A copy of the spec whose datasets and harness files sent as blobs (from the caller's
        machine) name where they were written back here, and the harness files among them by
        their path here (the folder each came in)."""
        harness_files: dict[str, pb.SentFolder] = {}
        spec = pb.RunSpec()
        spec.CopyFrom(request_spec)
        for folder in sent:
            if folder.ref not in spec.datasets and folder.ref not in spec.harnesses:
                raise PlanError(f"sent folder {folder.ref!r}: the run's spec names no such dataset or harness")
            local = str(await folders.receive(self.store, folder, self.home / "cache" / "folders"))
            if folder.file:
                harness_files[str(Path(local).resolve())] = folder
            for refs in (spec.datasets, spec.harnesses):
                refs[:] = [local if ref == folder.ref else ref for ref in refs]
        return spec, harness_files

    async def ResolveRun(self, request, context):
        spec, _ = await self._received(request.spec, request.folders)
        resolved = await self._resolve(spec)
        return ppb.ResolveRunResponse(
            datasets=[convert.dataset_to_proto(d, tasks) for d, tasks in resolved.datasets],
            harnesses=[harness_to_proto(h, spec.model) for h in resolved.harnesses],
            trials=len(resolved.trials),
        )

    async def PlanRun(self, request, context):
        spec, harness_files = await self._received(request.spec, request.folders)
        resolved = await self._resolve(spec, build_images=self.build_images)
        if request.loose:
            _check_loose(resolved, spec)
        await self._upload_task_files(resolved)
        spec.baseline = resolved.baseline
        del spec.judge_specs[:]
        spec.judge_specs.extend(resolved.judges)
        spec.judges[:] = [j.name for j in resolved.judges]
        spec.label = spec.label or runspec.default_label(
            [h.harness_name for h in resolved.harnesses],
            [t.task_name for _, tasks in resolved.datasets for t in tasks]
            if request.loose
            else [d.name for d, _ in resolved.datasets],
        )
        spec.history_kept[:] = resolved.history_kept
        spec.history_layer = history.STRIPPED if runspec.with_defaults(spec).sandbox != "host" else ""
        # Recorded as the caller wrote them, not as the folders sent were written back here: a
        # resume or repair from the caller's machine resolves them again there (hemra resume).
        spec.datasets[:] = request.spec.datasets
        spec.harnesses[:] = request.spec.harnesses
        harnesses = [harness_to_proto(h, spec.model) for h in resolved.harnesses]
        for harness in harnesses:  # a harness file sent from the caller's machine: say where from
            sent = harness_files.get(harness.source_path)
            if sent is not None:
                harness.folder.CopyFrom(sent)
        record = spb.RecordRunRequest(
            spec=spec,
            datasets=[convert.dataset_to_proto(d, tasks) for d, tasks in resolved.datasets],
            harnesses=harnesses,
            cells=[_cell(resolved, d, h, harnesses[h]) for d, h in resolved.cells],
            trials=[spb.PlannedTrial(cell_index=c, task_digest=t.digest, repetition=k) for c, t, k in resolved.trials],
            request_id=request.request_id,  # a repeated PlanRun answers the run its first recorded
            kind="loose" if request.loose else "run",
        )
        response = await self.store.RecordRun(record)
        return ppb.PlanRunResponse(run=response.run)

    async def PinTasks(self, request, context):
        pinned, loaded = [], []
        for path in request.paths:
            try:
                task = await asyncio.to_thread(load_task, Path(path))
            except PlanError as exc:
                pinned.append(ppb.PinnedTask(path=path, error=str(exc)))
                continue
            loaded.append(task)
            pinned.append(
                ppb.PinnedTask(path=path, task=task_to_proto(task), harbor_digest=harbor_content_hash(task.files))
            )
        await self._upload_files(loaded)
        return ppb.PinTasksResponse(tasks=pinned)

    async def PinDataset(self, request, context):
        dataset = await asyncio.to_thread(ds.pin, request.ref, self.home, request.allow_head)
        await self._upload_files(dataset.tasks)
        proto = convert.dataset_to_proto(dataset, dataset.tasks)
        await self.store.RecordDataset(spb.RecordDatasetRequest(dataset=proto))
        return ppb.PinDatasetResponse(dataset=proto, origin_json=json.dumps(_pinned_tasks(dataset)))

    async def AuditDataset(self, request, context):
        await restore.ensure(self.store, request.ref, self.home, None)
        dataset = await asyncio.to_thread(ds.resolve, request.ref, self.home)
        tasks = auditing.selected(dataset, list(request.tasks))
        await asyncio.to_thread(auditing.check_engine)
        # Pinned first: the audit is recorded against the dataset's digest.
        await self._upload_files(dataset.tasks)
        await self.store.RecordDataset(
            spb.RecordDatasetRequest(dataset=convert.dataset_to_proto(dataset, dataset.tasks))
        )
        found = await asyncio.to_thread(auditing.run, dataset, tasks, list(request.allow_history))
        if request.allow_history:  # not what runs use (they strip unless they opt in): shown, not recorded
            found.audit_time.GetCurrentTime()
            return ppb.AuditDatasetResponse(audit=found)
        recorded = await self.store.RecordDatasetAudit(spb.RecordDatasetAuditRequest(audit=found))
        return ppb.AuditDatasetResponse(audit=recorded.audit)

    async def _upload_task_files(self, resolved: plan.Resolved) -> None:
        await self._upload_files([t for _, tasks in resolved.datasets for t in tasks])

    async def _upload_files(self, tasks) -> None:
        files = {f.digest: f.data for t in tasks for f in t.files}
        missing = (await self.store.FindMissingBlobs(spb.FindMissingBlobsRequest(digests=list(files)))).missing
        batch, size = [], 0
        for digest in missing:
            batch.append(spb.Blob(digest=digest, data=files[digest]))
            size += len(files[digest])
            if size >= _BATCH_BYTES:
                await self.store.PutBlobs(spb.PutBlobsRequest(blobs=batch))
                batch, size = [], 0
        if batch:
            await self.store.PutBlobs(spb.PutBlobsRequest(blobs=batch))


def _pinned_tasks(dataset: ds.LoadedDataset) -> list[dict]:
    """What `hemra datasets pin --json` shows of each task: where it came from (a registry
    task's repository, commit and path, by its folder), and Harbor's content hash of it."""
    fetched = {t.get("name"): t for t in (dataset.origin or {}).get("tasks", []) if isinstance(t, dict)}
    return [
        {
            "task_name": task.task_name,
            "digest": task.digest,
            "origin": task.origin,
            "harbor_digest": harbor_content_hash(task.files),
            **{k: v for k, v in fetched.get(task.folder.name, {}).items() if k != "name"},
        }
        for task in dataset.tasks
    ]


def _cell(resolved: plan.Resolved, d: int, h: int, harness: pb.Harness) -> pb.Cell:
    dataset = resolved.datasets[d][0]
    return pb.Cell(
        dataset_name=dataset.name,
        dataset_digest=dataset.digest,
        harness_name=harness.harness_name,
        harness_digest=harness.digest,
        model=harness.model,
    )


def _check_loose(resolved, spec) -> None:
    """A loose attempt is one harness on one task, once (PlanError naming what is more)."""
    tasks = [t.task_name for _, selected in resolved.datasets for t in selected]
    if len(resolved.harnesses) != 1 or len(resolved.datasets) != 1 or len(tasks) != 1 or spec.attempts > 1:
        raise PlanError(
            f"a loose attempt is one harness on one task, once (got {len(resolved.harnesses)} harnesses, "
            f"{len(tasks)} tasks: {', '.join(tasks[:3])}{', ...' if len(tasks) > 3 else ''}; attempts {spec.attempts})"
        )
