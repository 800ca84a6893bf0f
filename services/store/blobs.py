"""The content-addressed blob store: files named by the sha256 of their bytes."""

import hashlib
import itertools
import os
import re
from pathlib import Path

from hemra.services.common.errors import InvalidArgument, NotFound

_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
_FAN_OUT = [f"{i:02x}" for i in range(256)]
_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0)
# Temporary names: the process ID and a counter shared by every BlobStore of the process, unique
# without mkstemp's random names (O_EXCL still refuses a name left by an earlier process).
_TMP_NAMES = itertools.count()


class BlobStore:
    """Blobs under `root/sha256/<2 hex>/<62 hex>`, written atomically, never rewritten."""

    def __init__(self, root: Path):
        self.root = root
        self._base = str(root / "sha256")
        self._made = False

    def path_of(self, digest: str) -> Path:
        return Path(self._path(digest))

    def _path(self, digest: str) -> str:
        # Plain strings: imports look up and write tens of thousands of blobs.
        if not _DIGEST.fullmatch(digest):
            raise InvalidArgument(f"not a sha256 digest: {digest!r}")
        return os.path.join(self._base, digest[7:9], digest[9:])

    def put(self, data: bytes, expected: str = "") -> str:
        """Store `data` and return its digest; refuse when `expected` disagrees."""
        return self.put_many([(expected, data)])[0]

    def put_many(self, blobs: list[tuple[str, bytes]]) -> list[str]:
        """Store each (expected digest or "", data); their digests. Every digest is checked
        before anything is written, so a bad one leaves the store as it was."""
        digests = []
        for expected, data in blobs:
            digest = "sha256:" + hashlib.sha256(data).hexdigest()
            if expected and expected != digest:
                raise InvalidArgument(f"blob digest mismatch: sent {expected}, content is {digest}")
            digests.append(digest)
        try:
            self._make_folders()
            for digest, (_, data) in zip(digests, blobs):
                self._write(os.path.join(self._base, digest[7:9], digest[9:]), data)
        except OSError as exc:  # a full or read-only file system: said once, naming the folder
            from hemra.services.store import db

            refused = db.unwritable(exc, str(self.root))
            if refused is None:
                raise
            raise refused from None
        return digests

    def _make_folders(self) -> None:
        # The 256 fan-out folders once, rather than a makedirs per blob.
        if not self._made:
            for name in _FAN_OUT:
                os.makedirs(os.path.join(self._base, name), exist_ok=True)
            self._made = True

    def _write(self, path: str, data: bytes) -> None:
        """Write under a temporary name and rename: a blob is never seen half-written."""
        if os.path.exists(path):
            return  # never rewritten (tasks pinned again send every file again)
        fd, tmp = _new_file(os.path.dirname(path))
        try:
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
            finally:
                os.close(fd)
            os.rename(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass
            raise

    def get(self, digest: str) -> bytes:
        try:
            return self.path_of(digest).read_bytes()
        except FileNotFoundError:
            raise NotFound(f"blob {digest} not found") from None

    def has(self, digest: str) -> bool:
        return os.path.exists(self._path(digest))


def _new_file(folder: str) -> tuple[int, str]:
    while True:
        tmp = f"{folder}/.tmp-{os.getpid()}-{next(_TMP_NAMES)}"
        try:
            return os.open(tmp, _NEW_FILE, 0o600), tmp
        except FileExistsError:
            continue  # left by an earlier process with the same ID
