"""Folders sent as blobs (hemra.v1.SentFolder) are input from another machine: sent through a
real gateway front door to the real planner and importer, a folder whose name, listing or
blobs would write outside the service's cache, or write something other than what its digests
say, is refused with INVALID_ARGUMENT in one line, nothing is written (not even under the
cache), and the store still reads."""

import os
import shutil

import pytest

from hemra.services.common import errors
from hemra.services.digests import sha256
from hemra.services.domain import folders
from hemra.services.domain.tree import MAX_FILE_BYTES
from hemra.v1 import common_pb2 as pb
from hemra.v1 import importer_service_pb2 as ipb
from hemra.v1 import planner_service_pb2 as ppb
from hemra.v1 import store_service_pb2 as spb
from tests.conftest import REPO
from tests.rpc.frontdoor import deployment, one_line, put_listing

DATA = b"hello"
FILE = {"path": "f.txt", "blobDigest": sha256(DATA), "sizeBytes": str(len(DATA))}
BIG = MAX_FILE_BYTES + 1


@pytest.fixture
async def door(tmp_path, monkeypatch):
    monkeypatch.setenv("HEMRA_HOME", str(tmp_path / "home"))  # where the importer writes back
    async with deployment(tmp_path / "home") as door:
        yield door


async def _send(door, service: str, folder: pb.SentFolder):
    """Send `folder` the way each service receives one: a run's dataset, an import."""
    if service == "planner":
        spec = pb.RunSpec(datasets=[folder.ref], harnesses=["oracle"], sandbox="host")
        return await door.planner.PlanRun(ppb.PlanRunRequest(spec=spec, folders=[folder]))
    return await door.importer.ImportResults(ipb.ImportResultsRequest(folder=folder))


async def _refused(door, tmp_path, service: str, folder: pb.SentFolder) -> str:
    with pytest.raises(errors.HemraError) as caught:
        await _send(door, service, folder)
    message = one_line(caught.value, "INVALID_ARGUMENT")
    assert message.startswith(f"sent folder {folder.ref!r}: "), message
    # Nothing escaped, and nothing was left under the cache either.
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith("escaped")]
    cache = door.home / "cache" / "folders"
    assert not cache.exists() or not list(cache.iterdir()), list(cache.iterdir())
    # The store still reads.
    assert (await door.store.ListRuns(spb.ListRunsRequest())).runs == []
    got = await door.store.GetBlobs(spb.GetBlobsRequest(digests=[folder.tree_digest]))
    assert [b.digest for b in got.blobs] == [folder.tree_digest]
    return message


NAMES = ["{tmp}/escaped", "../../../../escaped", "a/b", "..", ".", "a\0b", "x" * 256]


@pytest.mark.parametrize("service", ["planner", "importer"])
async def test_a_folder_name_that_is_not_one_name_is_refused(door, tmp_path, service):
    digest = await put_listing(door.store, [FILE], (DATA,))
    for name in NAMES:  # one deployment for every case: each leaves nothing behind
        name = name.format(tmp=tmp_path)
        folder = pb.SentFolder(ref="./mine", tree_digest=digest, name=name)
        message = await _refused(door, tmp_path, service, folder)
        assert message.endswith(f"name {name[:200]!r} is not a file or folder name"), message


ENTRIES = {
    "a parent folder": ([{**FILE, "path": "../escaped.txt"}], "entry '../escaped.txt': '..' is not a file"),
    "an absolute path": ([{**FILE, "path": "/abs/escaped.txt"}], "entry '/abs/escaped.txt': '' is not a file"),
    "a parent folder inside": (
        [{"path": "a", "isDir": True}, {**FILE, "path": "a/../../escaped.txt"}],
        "entry 'a/../../escaped.txt': '..' is not a file",
    ),
    "a backslash": ([{**FILE, "path": "..\\escaped.txt"}], "is not a file or folder name"),
    "a NUL": ([{**FILE, "path": "f\0.txt"}], "is not a file or folder name"),
    "a name too long": ([{**FILE, "path": "x" * 256}], "is not a file or folder name"),
    "a path too long": ([{**FILE, "path": "/".join(["x" * 200] * 21)}], "a path longer than 4096 bytes"),
    "a path listed twice": ([FILE, FILE], "'f.txt' is listed twice"),
    "a file and a folder of one path": ([FILE, {"path": "f.txt", "isDir": True}], "'f.txt' is listed twice"),
    "an entry under a file": ([FILE, {**FILE, "path": "f.txt/x"}], "'f.txt/x' is under a file"),
    "a folder under a file": ([FILE, {"path": "f.txt/d", "isDir": True}], "'f.txt/d' is under a file"),
    "a file in a folder not listed": (
        [{**FILE, "path": "d/f.txt"}],
        "'d/f.txt' is under a folder the listing does not hold",
    ),
    "a folder with a blob": (
        [{"path": "d", "isDir": True, "blobDigest": FILE["blobDigest"]}],
        "'d' is a folder with a blob, a mode or a size",
    ),
    "a file without a digest": ([{"path": "f.txt"}], "'f.txt': blobDigest is not sha256:<hex>"),
    "a size that is not a number": ([{**FILE, "sizeBytes": "-1"}], "sizeBytes '-1' is not a size"),
    "a size past the largest file": ([{**FILE, "sizeBytes": str(BIG)}], f"sizeBytes '{BIG}' is not a size"),
    "a size the blob does not have": ([{**FILE, "sizeBytes": "3"}], "'f.txt': 5 bytes, listed as 3"),
    "an unknown field": ([{**FILE, "mode": 511}], "its listing is not a list of TreeEntry"),
    "not a list": ({"path": "f.txt"}, "its listing is not a list of TreeEntry"),
}


async def test_a_listing_that_reaches_outside_or_contradicts_itself_is_refused(door, tmp_path):
    """(The planner and the executor write folders back with the same code: one is enough.)"""
    for case, (rows, expected) in ENTRIES.items():
        digest = await put_listing(door.store, rows, (DATA,))
        folder = pb.SentFolder(ref="./mine", tree_digest=digest, name="mine")
        message = await _refused(door, tmp_path, "importer", folder)
        assert expected in message, (case, message)


async def test_a_listing_that_is_not_json_is_refused(door, tmp_path):
    listing = b"[{not json"
    await door.store.PutBlobs(spb.PutBlobsRequest(blobs=[spb.Blob(digest=sha256(listing), data=listing)]))
    folder = pb.SentFolder(ref="./mine", tree_digest=sha256(listing), name="mine")
    assert "its listing is not a list of TreeEntry" in await _refused(door, tmp_path, "importer", folder)


@pytest.mark.parametrize("which", ["listing", "file"])
async def test_blobs_whose_bytes_do_not_hash_to_their_digest_are_refused_before_anything_is_written(
    door, tmp_path, which
):
    """The store checks what it is sent; a copy changed on its disk since is caught as read."""
    digest = await put_listing(door.store, [FILE], (DATA,))
    changed = door.blob_path(digest if which == "listing" else FILE["blobDigest"])
    os.chmod(changed, 0o644)
    changed.write_bytes(b'[{"path": "evil.txt", "blobDigest": "' + FILE["blobDigest"].encode() + b'"}]')
    message = await _refused(door, tmp_path, "planner", pb.SentFolder(ref="./mine", tree_digest=digest, name="m"))
    subject = f"its listing {digest}" if which == "listing" else f"blob {FILE['blobDigest']}"
    assert message.endswith(f"{subject}: the store's bytes do not hash to it"), message


@pytest.mark.parametrize("file", ["../escaped.toml", "/abs.toml", "a/../b.toml", "missing.toml", "d"])
async def test_a_harness_file_outside_its_folder_or_not_listed_is_refused(door, tmp_path, file):
    digest = await put_listing(door.store, [FILE, {"path": "d", "isDir": True}], (DATA,))
    folder = pb.SentFolder(ref="./h.toml", tree_digest=digest, name="harnesses", file=file)
    spec = pb.RunSpec(datasets=["hemra-offline"], harnesses=["./h.toml"], sandbox="host")
    with pytest.raises(errors.HemraError) as caught:
        await door.planner.PlanRun(ppb.PlanRunRequest(spec=spec, folders=[folder]))
    message = one_line(caught.value, "INVALID_ARGUMENT")
    assert message.startswith("sent folder './h.toml': file "), message
    assert not (door.home / "cache" / "folders").exists() or not list((door.home / "cache" / "folders").iterdir())


async def test_a_folder_sent_as_the_cli_sends_it_plans_a_run_and_is_reused(door, tmp_path):
    """The normal remote flow still works: a dataset from the caller's machine, sent as blobs."""
    dataset = tmp_path / "my-tasks"
    shutil.copytree(REPO / "examples" / "hemra-offline" / "reverse-lines", dataset / "reverse-lines")
    folder = await folders.send(door.store, dataset, ref="./my-tasks")
    run = await _send(door, "planner", folder)
    assert run.run.id.startswith("r-")
    [written] = (door.home / "cache" / "folders").iterdir()
    assert (written / "my-tasks" / "reverse-lines" / "task.toml").read_bytes() == (
        dataset / "reverse-lines" / "task.toml"
    ).read_bytes()
    again = await _send(door, "planner", folder)  # written back once per listing
    assert again.run.id != run.run.id and [written] == list((door.home / "cache" / "folders").iterdir())
