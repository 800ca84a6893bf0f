"""A pinned copy of a registry or Hugging Face dataset whose cache folder is gone, written back
from the store: the store keeps every pinned task's files as blobs, so a dataset pinned once runs
again offline, identical (same task digests, same dataset digest), with no registry, repository
or hub reached.

Only a ref that names its pin offline can be restored: `harbor:NAME@VERSION` (or `NAME@VERSION`)
and `hf:ORG/NAME@<full commit>`. The copy is found in the store by the source text it was
recorded with, newest use first, and written aside then moved into place (pinned.writing).
"""

import asyncio
import hashlib
import re
import time
from pathlib import Path

from hemra.services.domain.planerrors import NotFound, PlanError
from hemra.services.planner import datasets as ds
from hemra.services.planner import hf, pinned, registry
from hemra.v1 import store_service_pb2 as spb

#: Task files fetched from the store in batches of this many blobs.
_BATCH = 256
_HARBOR_ORIGIN = re.compile(r"^(?P<url>.+)@(?P<commit>[0-9a-f]{40}(?:[0-9a-f]{24})?):(?P<path>.+)$")
_COMMIT = re.compile(r"^[0-9a-f]{40}$")


def wanted(ref: str, home: Path, base: Path | None) -> tuple[Path, str, str] | None:
    """(cache folder, source text prefix, source) of a pinned copy `ref` needs and lacks; None
    when it has its copy, or when only the registry or hub can say which copy it means."""
    try:
        name, version, _ = ds.parse_ref(ref)
    except PlanError:
        return None
    if not version:
        return None
    if name.startswith(hf.PREFIX):
        repo = name.removeprefix(hf.PREFIX)
        if not _COMMIT.match(version):
            return None
        try:
            mapping = hf.mapping_digest(hf.mapping_file(repo, ds.search_path(home, base)[:-1]))
        except (NotFound, PlanError, OSError):
            return None
        folder = hf.pinned_folder(home, repo, version, mapping)
        prefix = f"{hf.PREFIX}{repo}@{version} ({hf.registry_text(mapping)})"
        source = "hf"
    elif name.startswith(registry.PREFIX) or not (name.startswith(ds.SOURCES) or "/" in name or name.startswith(".")):
        short = name.removeprefix(registry.PREFIX)
        folder = registry.pinned_folder(home, short, version)
        prefix, source = f"{registry.PREFIX}{short}@{version} (", "harbor"
    else:
        return None
    if (folder / pinned.SOURCE_FILE).is_file():
        return None
    return folder, prefix, source


async def ensure(store, ref: str, home: Path, base: Path | None) -> bool:
    """Write back the pinned copy `ref` needs from the store, when it lacks one and the store
    has it. False when there is nothing to restore (resolving then goes on as usual)."""
    need = await asyncio.to_thread(wanted, ref, home, base)
    if need is None:
        return False
    folder, prefix, source = need
    listed = (await store.ListDatasets(spb.ListDatasetsRequest())).datasets
    found = next((d for d in listed if d.source.startswith(prefix)), None)  # newest use first
    if found is None:
        return False
    tasks = await _tasks(store, found.digest)
    digests = sorted({f.blob_digest for task in tasks for f in task.files})
    data: dict[str, bytes] = {}
    for start in range(0, len(digests), _BATCH):
        response = await store.GetBlobs(spb.GetBlobsRequest(digests=digests[start : start + _BATCH]))
        data.update({b.digest: b.data for b in response.blobs})
    missing = [d for d in digests if d not in data]
    if missing:  # a store pruned of its blobs: fetch from the source as usual
        return False
    await asyncio.to_thread(_write, folder, found, tasks, data, source)
    return True


async def _tasks(store, digest: str) -> list:
    summaries, token = [], ""
    while True:
        page = await store.ListTasks(
            spb.ListTasksRequest(parent=f"datasets/{digest}", page_size=1000, page_token=token)
        )
        summaries += page.tasks
        token = page.next_page_token
        if not token:
            break
    return [(await store.GetTask(spb.GetTaskRequest(name=f"tasks/{t.digest}"))).task for t in summaries]


def _write(folder: Path, dataset, tasks: list, data: dict[str, bytes], source: str) -> None:
    record_tasks, used = [], set()
    with pinned.writing(folder) as work:
        for task in tasks:
            name, entry = _folder_name(task, source)
            while name in used:  # two tasks of one path's name: keep both
                name += "-" + task.digest.removeprefix("sha256:")[:8]
            used.add(name)
            for f in task.files:
                path = work / name / f.path
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(data[f.blob_digest])
                path.chmod(0o755 if f.executable else 0o644)
            if entry:
                record_tasks.append({"name": name, **entry})
        record = _record(dataset, tasks, record_tasks, source)
        pinned.describe(work, dataset.dataset_name, record)


def _folder_name(task, source: str) -> tuple[str, dict]:
    """The task's folder in the copy (a registry task's by the last part of its path, as the
    registry names them; a Hugging Face task's by its row's name) and its registry entry."""
    if source == "harbor":
        match = _HARBOR_ORIGIN.match(task.origin)
        if match:
            entry = {"git_url": match["url"], "commit": match["commit"], "path": match["path"]}
            return match["path"].rstrip("/").rsplit("/", 1)[-1], entry
    name = task.task_name.split("/", 1)[-1] if source == "hf" else task.task_name
    safe = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.") or hashlib.sha256(name.encode()).hexdigest()[:12]
    return safe, {}


def _record(dataset, tasks: list, record_tasks: list[dict], source: str) -> dict:
    """What the copy says of its source: as it was pinned, read back from the store's record."""
    # "harbor:NAME@VERSION (REGISTRY)" / "hf:ORG/NAME@COMMIT (huggingface, mapping …)"
    head, _, where = dataset.source.partition(" (")
    name, _, version = head.split(":", 1)[1].rpartition("@")
    record = {
        "source": source,
        "name": name,
        "version": version,
        "registry": where.removesuffix(")"),
        "restored_time": time.time(),
        "restored_from": f"the store ({dataset.name})",
        "tasks": sorted(record_tasks, key=lambda t: t["name"]),
    }
    if source == "hf":
        record["revision"] = version
    return record
