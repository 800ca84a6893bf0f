"""A dataset copy made from a source (the Harbor registry, Hugging Face): written aside, then put
in place in one rename, so a copy is whole or absent, never half-written."""

import contextlib
import json
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

#: What a copy says of where it came from (beside its task folders).
SOURCE_FILE = "hemra-source.json"


@contextlib.contextmanager
def writing(folder: Path) -> Iterator[Path]:
    """A fresh folder beside `folder` to fill; put in `folder`'s place (replacing it) when the
    block ends without an error, removed otherwise (with the folders made to hold it): a copy
    that fails midway leaves nothing in the cache."""
    made = [p for p in (folder.parent, *folder.parent.parents) if not p.exists()]
    folder.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".making-", dir=folder.parent))
    done = False
    try:
        yield work
        if folder.exists():
            shutil.rmtree(folder)
        work.rename(folder)
        done = True
    finally:
        shutil.rmtree(work, ignore_errors=True)
        for parent in made if not done else ():
            with contextlib.suppress(OSError):  # not empty: another copy is being made there
                parent.rmdir()


def describe(work: Path, name: str, record: dict) -> None:
    """The copy's dataset name (dataset.toml) and where it came from (SOURCE_FILE)."""
    (work / SOURCE_FILE).write_text(json.dumps(record, indent=2))
    (work / "dataset.toml").write_text(f"name = {json.dumps(name)}\n")


def source_of(folder: Path) -> dict | None:
    """What a copy says of its source (None for a plain folder)."""
    try:
        return json.loads((folder / SOURCE_FILE).read_text())
    except (OSError, ValueError):
        return None
