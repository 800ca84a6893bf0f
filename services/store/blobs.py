"""The content-addressed blob store: files named by the sha256 of their bytes."""

import hashlib
import os
import tempfile
from pathlib import Path

from services.store.errors import InvalidArgument, NotFound


class BlobStore:
    """Blobs under `root/sha256/<2 hex>/<62 hex>`, written atomically, never rewritten."""

    def __init__(self, root: Path):
        self.root = root

    def path_of(self, digest: str) -> Path:
        algo, _, hexdigest = digest.partition(":")
        if algo != "sha256" or len(hexdigest) != 64 or not all(c in "0123456789abcdef" for c in hexdigest):
            raise InvalidArgument(f"not a sha256 digest: {digest!r}")
        return self.root / "sha256" / hexdigest[:2] / hexdigest[2:]

    def put(self, data: bytes, expected: str = "") -> str:
        """Store `data` and return its digest; refuse when `expected` disagrees."""
        digest = "sha256:" + hashlib.sha256(data).hexdigest()
        if expected and expected != digest:
            raise InvalidArgument(f"blob digest mismatch: sent {expected}, content is {digest}")
        path = self.path_of(digest)
        if path.exists():
            return digest
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
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
        return self.path_of(digest).exists()
