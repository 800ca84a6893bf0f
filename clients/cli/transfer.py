"""hemra import and hemra export: results made elsewhere in, self-contained copies out."""

import asyncio
import os
import shutil
import tempfile
from pathlib import Path
from typing import Annotated

import msgspec
import typer
from google.protobuf import json_format

from hemra.clients.cli import connect
from hemra.clients.cli.common import command, console, fail
from hemra.clients.cli.safe import plain
from hemra.services.domain import exportformat, folders
from hemra.services.domain.exportformat import MANIFEST, BadName
from hemra.services.domain.records import TreeEntry
from hemra.services.domain.tree import make_folders, write_files, write_new_file
from hemra.v1 import importer_service_pb2 as ipb
from hemra.v1 import store_service_pb2 as spb

BLOB_BATCH = 256
EVENT_PAGE = 5000


def import_(
    path: Annotated[Path, typer.Argument(help="A Harbor job directory, a SWE-bench harness run, or a HEMRA export.")],
    label: Annotated[
        str | None,
        typer.Option("--label", help="The import's label (default: the folder name; a HEMRA export's own label)."),
    ] = None,
    swebench_version: Annotated[
        str | None,
        typer.Option("--swebench-version", help="The SWE-bench harness version that wrote the run, e.g. 5.0.2."),
    ] = None,
    tasks: Annotated[
        Path | None,
        typer.Option(
            "--tasks",
            help="Where a Harbor job's task folders are now, if not at the recorded paths "
            "(matched by folder name, checked by digest).",
        ),
    ] = None,
) -> None:
    """Import results produced elsewhere: files kept byte for byte, official rewards as they are."""
    _import(path, label or "", swebench_version or "", tasks)


@command
async def _import(path: Path, label: str, swebench_version: str, tasks: Path | None) -> None:
    async with connect.services() as services:
        request = ipb.ImportResultsRequest(label=label, swebench_version=swebench_version)
        if services.remote:  # the deployment's importer reads the folder from the store
            if tasks:
                fail("--tasks is not available through a server: import on the machine that holds the task folders")
            request.folder.CopyFrom(await folders.send(services.store, path.resolve(), ref=str(path)))
        else:
            request.path, request.tasks_dir = str(path.resolve()), str(tasks.resolve()) if tasks else ""
        response = await services.importer.ImportResults(request)
        run = (await services.store.GetRun(spb.GetRunRequest(run=response.import_id))).run
        console.print(
            plain(
                f"{run.kind} {run.id} ({run.label}): {run.progress.trials} trials"
                f"{', ' + run.import_format if run.import_format else ''}"
            )
        )
        for warning in response.warnings:
            console.print(plain(f"  warning: {warning}"), highlight=False, soft_wrap=True)


def export(
    run: Annotated[
        str, typer.Argument(help="A run's or import's ID or label, or an attempt or job ID (that trial only).")
    ],
    out: Annotated[Path, typer.Option("--out", help="A folder to create (or an empty one).")],
) -> None:
    """Write a self-contained copy: manifests, events, blobs (and an import's files as they were)."""
    if out.is_symlink():
        fail(f"{out}: a symbolic link; --out names a folder to create (or an empty one)")
    try:
        if out.exists() and (not out.is_dir() or any(out.iterdir())):
            fail(f"{out}: exists and is not an empty folder")
    except OSError as exc:
        fail(f"--out {out}: {exc.strerror or exc}")
    _export(run, out)


@command
async def _export(ref: str, out: Path) -> None:
    async with connect.services(store_only=True) as services:
        store = services.store
        exported = await store.ExportRun(spb.ExportRunRequest(run=ref))
        rows = msgspec.json.decode(exported.manifest_json)
        _check_names(rows, list(exported.blob_digests))
        try:
            out.parent.mkdir(parents=True, exist_ok=True)
            staging = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}-"))
        except OSError as exc:  # under a file, in /proc or /sys, not allowed
            fail(f"--out {out}: cannot create it there: {exc.strerror or exc}")
        try:
            blobs = await _write_blobs(store, list(exported.blob_digests), staging)
            # Only attempts that logged events: an import's thousands of attempts have none.
            await _write_events(store, [a["id"] for a in rows["attempts"] if a.get("event_count")], staging)
            run = rows["runs"][0]
            if run.get("tree"):
                source = staging / exportformat.SOURCE
                tree = [TreeEntry.of(row) for row in run["tree"]]
                make_folders(tree, source)
                # The tree's files are the blobs just written: linked, not written twice.
                write_files(tree, blobs, source, lambda digest: exportformat.blob_path(staging, digest))
            (staging / MANIFEST).write_bytes(
                msgspec.json.format(msgspec.json.encode(rows, order="sorted"), indent=1) + b"\n"
            )
            if out.exists():
                out.rmdir()
            os.rename(staging, out)
        except OSError as exc:
            shutil.rmtree(staging, ignore_errors=True)
            fail(f"--out {out}: cannot write the export: {exc.strerror or exc}")
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        console.print(
            plain(
                f"exported {run['kind']} {run['id']} ({run['label']}) to {out}: {len(rows['attempts'])} "
                f"attempts, {len(blobs)} blobs"
            )
        )


def _check_names(rows: dict, digests: list[str]) -> None:
    """Every name a file of the export is made from is HEMRA's own shape (attempt IDs, blob
    digests): a store that holds something else (a crafted import restored before IDs were
    checked) must not make an export write outside --out."""
    try:
        for attempt in rows["attempts"]:
            exportformat.events_path(Path(), attempt["id"])
        for digest in digests:
            exportformat.blob_path(Path(), digest)
    except BadName as exc:
        fail(f"the store holds {exc}; nothing exported")


async def _write_blobs(store, digests: list[str], root: Path) -> dict[str, bytes]:
    """Fetch the blobs a batch at a time and write them where the export keeps them under
    `root`, each batch written in a thread while the next is fetched; digest -> bytes."""
    found: dict[str, bytes] = {}
    made: set[str] = set()  # fan-out folders made so far
    writing = None
    for start in range(0, len(digests), BLOB_BATCH):
        response = await store.GetBlobs(spb.GetBlobsRequest(digests=digests[start : start + BLOB_BATCH]))
        batch = [(blob.digest, blob.data) for blob in response.blobs]
        found.update(batch)
        if writing is not None:
            await writing
        writing = asyncio.create_task(asyncio.to_thread(_save_blobs, batch, root, made))
    if writing is not None:
        await writing
    return found


def _save_blobs(blobs: list[tuple[str, bytes]], root: Path, made: set[Path]) -> None:
    for digest, data in blobs:
        path = exportformat.blob_path(root, digest)  # names checked before; checked again, never trusted
        if path.parent not in made:
            path.parent.mkdir(parents=True, exist_ok=True)
            made.add(path.parent)
        write_new_file(str(path), data, 0o644)


async def _write_events(store, attempt_ids: list[str], root: Path) -> None:
    (root / exportformat.EVENTS).mkdir(parents=True, exist_ok=True)
    for attempt_id in attempt_ids:
        path = exportformat.events_path(root, attempt_id)  # names checked before; checked again
        lines, token = [], ""
        while True:
            page = await store.ListEvents(
                spb.ListEventsRequest(parent=attempt_id, page_size=EVENT_PAGE, page_token=token)
            )
            lines += [json_format.MessageToJson(e, indent=None) for e in page.events]
            token = page.next_page_token
            if not token:
                break
        if lines:
            path.write_text("\n".join(lines) + "\n")
