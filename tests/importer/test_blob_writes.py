"""The blob writes an import makes: checked before written, atomic, byte for byte."""

import errno
import hashlib
import os

import pytest

from hemra.services.common.errors import InvalidArgument
from hemra.services.domain import tree
from hemra.services.domain.records import TreeEntry
from hemra.services.store import blobs as blob_module
from hemra.services.store.blobs import BlobStore


def digest_of(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def files_under(root):
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def test_put_many__a_wrong_digest_anywhere_writes_nothing(tmp_path):
    store = BlobStore(tmp_path)
    good = [(digest_of(b"a"), b"a"), (digest_of(b"b"), b"b")]
    with pytest.raises(InvalidArgument, match="blob digest mismatch"):
        store.put_many([*good, (digest_of(b"c"), b"not c")])
    assert files_under(tmp_path) == []


def test_put_many__bytes_kept_exactly_and_no_temporary_left(tmp_path):
    store = BlobStore(tmp_path)
    datas = [b"", b"no newline at the end", b"\x00\xff" * 70_000, b"no newline at the end"]
    assert store.put_many([("", d) for d in datas]) == [digest_of(d) for d in datas]
    for data in datas:
        assert store.get(digest_of(data)) == data
    assert not [name for name in files_under(tmp_path) if ".tmp-" in name]
    assert len(files_under(tmp_path)) == 3  # the same bytes twice are one blob


def test_put_many__a_temporary_name_left_by_an_earlier_process_is_skipped(tmp_path):
    store = BlobStore(tmp_path)
    data = b"after a crash"
    folder = tmp_path / "sha256" / digest_of(data)[7:9]
    folder.mkdir(parents=True)
    following = next(blob_module._TMP_NAMES) + 1
    stale = [folder / f".tmp-{os.getpid()}-{following + k}" for k in range(3)]
    for path in stale:
        path.write_bytes(b"half")
    assert store.put(data) == digest_of(data)
    assert store.get(digest_of(data)) == data
    assert all(p.read_bytes() == b"half" for p in stale)  # not overwritten, not removed


@pytest.mark.parametrize("refusal", [errno.EMLINK, errno.EPERM])
def test_write_files__a_file_that_cannot_be_linked_to_its_blob_is_copied(refusal, tmp_path, monkeypatch):
    """ext4 refuses a 65,001st link to one inode (a file common to every trial of a big job), some
    file systems refuse links at all: the export writes a copy there instead of failing."""
    kept = tmp_path / "blob"
    kept.write_bytes(b"common")
    entries = [TreeEntry("a", is_dir=True), TreeEntry("a/one", blob_digest="d"), TreeEntry("a/two", blob_digest="d")]
    real_link, calls = os.link, []

    def link(src, dst):
        calls.append(dst)
        if len(calls) == 2:
            raise OSError(refusal, os.strerror(refusal))
        real_link(src, dst)

    monkeypatch.setattr(tree.os, "link", link)
    tree.make_folders(entries, tmp_path / "out")
    tree.write_files(entries, {"d": b"common"}, tmp_path / "out", lambda digest: kept)
    one, two = tmp_path / "out/a/one", tmp_path / "out/a/two"
    assert one.stat().st_ino == kept.stat().st_ino and two.stat().st_ino != kept.stat().st_ino
    assert two.read_bytes() == b"common" and two.stat().st_mode & 0o777 == 0o644 and len(calls) == 2


def test_write_files__any_other_link_failure_is_raised(tmp_path, monkeypatch):
    def link(src, dst):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(tree.os, "link", link)
    entries = [TreeEntry("f", blob_digest="d")]
    with pytest.raises(OSError, match="No space"):
        tree.write_files(entries, {"d": b"x"}, tmp_path, lambda digest: tmp_path / "blob")
