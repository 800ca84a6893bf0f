"""The content-addressed blob store: files named by the sha256 of their bytes."""

import hashlib
import os
import re
import tempfile
from pathlib import Path

from services.store.errors import InvalidArgument, NotFound

_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")


class BlobStore:
    """Blobs under `root/sha256/<2 hex>/<62 hex>`, written atomically, never rewritten."""

    def __init__(self, root: Path):
        self.root = root
        self._base = str(root / "sha256")
        self._folders: set[str] = set()

    def path_of(self, digest: str) -> Path:
        return Path(self._path(digest))

    def _path(self, digest: str) -> str:
        # Plain strings: imports look up and write tens of thousands of blobs.
        if not _DIGEST.fullmatch(digest):
            raise InvalidArgument(f"not a sha256 digest: {digest!r}")
        return os.path.join(self._base, digest[7:9], digest[9:])

    def put(self, data: bytes, expected: str = "") -> str:
        """Store `data` and return its digest; refuse when `expected` disagrees."""
        digest = "sha256:" + hashlib.sha256(data).hexdigest()
        if expected and expected != digest:
            raise InvalidArgument(f"blob digest mismatch: sent {expected}, content is {digest}")
        path = self._path(digest)
        if os.path.exists(path):
            return digest
        folder = os.path.dirname(path)
        if folder not in self._folders:
            os.makedirs(folder, exist_ok=True)
            self._folders.add(folder)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(data)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return digest

    def get(self, digest: str) -> bytes:
        try:
            return self.path_of(digest).read_bytes()
        except FileNotFoundError:
            raise NotFound(f"blob {digest} not found") from None

    def has(self, digest: str) -> bool:
        return os.path.exists(self._path(digest))
