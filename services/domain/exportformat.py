"""The HEMRA export format, in one place: what `hemra export` writes, what the importer reads
back and what the store's manifest holds. A folder of

    hemra-export.json         the manifest: {"format": "hemra-export", "version": 1, <table>: [rows]}
    blobs/<2 hex>/<62 hex>    every blob the rows name, by its sha256 digest
    events/<attempt id>.jsonl each attempt's events, one JSON Event a line
    source/                   an import's files as they were (for reading; never read back)

Every file name is made from a validated name (a digest, a HEMRA attempt ID) and nothing else."""

import re
from pathlib import Path

from hemra.services.domain.ids import kind_of

FORMAT, VERSION = "hemra-export", 1
MANIFEST = "hemra-export.json"
BLOBS, EVENTS, SOURCE = "blobs", "events", "source"
DIGEST = re.compile(r"sha256:[0-9a-f]{64}")


class BadName(ValueError):
    """A name an export's file would be made from, or read as, is not HEMRA's own shape."""


def blob_path(root: Path, digest: str) -> Path:
    """Where a blob is kept: blobs/<first 2 hex>/<other 62>."""
    if not DIGEST.fullmatch(digest):
        raise BadName(f"blob {digest[:100]!r} is not a sha256:<hex> digest")
    hexdigest = digest.removeprefix("sha256:")
    return root / BLOBS / hexdigest[:2] / hexdigest[2:]


def blob_digest(root: Path, path: Path) -> str:
    """The digest a file under blobs/ is kept as, from its path."""
    digest = "sha256:" + path.parent.name + path.name
    if path.parent.parent != root / BLOBS or not DIGEST.fullmatch(digest):
        raise BadName(f"{path}: not a blob of an export (blobs/<2 hex>/<62 hex>)")
    return digest


def events_path(root: Path, attempt_id: str) -> Path:
    if kind_of(attempt_id) != "attempt":
        raise BadName(f"{attempt_id[:100]!r} is not a HEMRA attempt ID")
    return root / EVENTS / f"{attempt_id}.jsonl"


def events_attempt(path: Path) -> str:
    """The attempt an events file is named after."""
    if kind_of(path.stem) != "attempt":
        raise BadName(f"{path}: not named after a HEMRA attempt ID")
    return path.stem
