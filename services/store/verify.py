"""Task and harness records from someone else (an export being restored), verified.

A record is pinned by a digest, but the store keeps the whole record: what the
executor runs (a harness's command, a task's tests/test.sh, its environment) is
read from it. A crafted export could carry any record under the digest of a real
task or harness. So every restored record is recomputed from what its digest
covers, exactly as the planner computes it, and refused when it says anything
else:

* a task with files: the digest over its files (path, executable bit, blob
  digest), then the files themselves (from the blob store, whose blobs are
  checked against their names) loaded as the planner loads a task folder;
* a task without files (an import's "imported task"): nothing but its name, and Harbor's
  digest of it when its digest was made of that (services/importer/record.py);
* a harness file: the sha256 of its TOML text, then that text loaded as the
  planner loads a harness file;
* a built-in: its name's digest and the built-in's own record;
* an import's agent: the digest over what the import recorded of it.

What the digest cannot cover is kept from the export: a task's name when its
task.toml has none (the folder's name), a harness's name and path when its file
has none, and the run's model. The record stored is the recomputed one.
"""

import os
import tempfile
import tomllib
from collections.abc import Callable
from pathlib import Path

from google.protobuf import json_format

from hemra.services import digests
from hemra.services.common.errors import InvalidArgument
from hemra.v1 import common_pb2 as pb

#: The largest task file a restore loads to check it (imports keep files of at most 200 MiB).
MAX_FILE_BYTES = 256 * 1024 * 1024
#: Fields a file-less (imported) task record may carry.
_IMPORTED_TASK = {"name", "digest", "task_name", "harbor_digest"}
_IMPORT_HARNESS = {"name", "digest", "harness_name", "kind", "agent", "agent_version", "model"}


def _parse(record: dict, message, what: str):
    try:
        return json_format.ParseDict(record, message)
    except (json_format.ParseError, TypeError, ValueError, AttributeError) as exc:
        first = (str(exc).splitlines() or [""])[0][:200]
        raise InvalidArgument(f"{what}: not a valid record ({first})") from None


def _differences(claimed, expected) -> list[str]:
    """Fields the claimed record sets to something the recomputed one does not hold."""
    return [field.name for field, value in claimed.ListFields() if getattr(expected, field.name) != value]


def _refuse_unless_same(claimed, expected, what: str) -> None:
    wrong = _differences(claimed, expected)
    if wrong:
        raise InvalidArgument(
            f"{what}: its record does not match its digest ({', '.join(wrong)} differ from what its files say); refused"
        )


def verify_task(row: dict, blob: Callable[[str], bytes]) -> dict:
    """The task record to store for an export's task row, recomputed; InvalidArgument otherwise."""
    digest = row["digest"]
    what = f"task {row['task_name'][:100]!r} ({digest})"
    claimed = _parse(row["record"], pb.Task(), what)
    if claimed.digest != digest or claimed.task_name != row["task_name"]:
        raise InvalidArgument(f"{what}: its record names another digest or task")
    if not claimed.files:
        extra = sorted(f.name for f, _ in claimed.ListFields() if f.name not in _IMPORTED_TASK)
        if extra:
            raise InvalidArgument(f"{what}: a task without files can only be an imported one, yet it has {extra[0]}")
        harbor = claimed.harbor_digest
        if harbor and digests.sha256(f"imported task\0{harbor}".encode()) != digest:
            raise InvalidArgument(f"{what}: its Harbor digest is not the one its digest was made of; refused")
        return json_format.MessageToDict(
            pb.Task(name=f"tasks/{digest}", digest=digest, task_name=claimed.task_name, harbor_digest=harbor)
        )
    files = [(f.path, f.executable, f.blob_digest) for f in claimed.files]
    if digests.task_digest(files) != digest:
        raise InvalidArgument(f"{what}: its files do not hash to its digest (a crafted or damaged export); refused")
    expected = _load_task(claimed, blob, what)
    _refuse_unless_same(claimed, expected, what)
    return json_format.MessageToDict(expected)


def _load_task(claimed: pb.Task, blob: Callable[[str], bytes], what: str) -> pb.Task:
    from hemra.services.domain.planerrors import PlanError
    from hemra.services.domain.tasks import load_task, task_to_proto

    with tempfile.TemporaryDirectory(prefix="hemra-verify-") as scratch:
        folder = Path(scratch) / "task"
        folder.mkdir()
        for file in claimed.files:
            parts = file.path.split("/")
            if file.path.startswith("/") or any(p in ("", ".", "..") for p in parts) or "\0" in file.path:
                raise InvalidArgument(f"{what}: file {file.path[:100]!r} is not a relative path inside the task")
            if file.size_bytes > MAX_FILE_BYTES:
                raise InvalidArgument(
                    f"{what}: {file.path} is {file.size_bytes:,} bytes; a restored task file may "
                    f"have at most {MAX_FILE_BYTES // 1024 // 1024} MiB"
                )
            data = blob(file.blob_digest)
            if len(data) != file.size_bytes:
                raise InvalidArgument(f"{what}: {file.path} has {len(data)} bytes, its record says {file.size_bytes}")
            target = folder.joinpath(*parts)
            try:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
            except OSError as exc:  # a file where a folder goes, or the reverse
                raise InvalidArgument(f"{what}: {file.path}: {exc.strerror}") from None
            os.chmod(target, 0o755 if file.executable else 0o644)
        try:
            loaded = load_task(folder)
        except PlanError as exc:
            message = str(exc).replace(str(folder), "<task>")
            raise InvalidArgument(f"{what}: its files are not a task ({message})") from None
        except (OSError, UnicodeError, ValueError) as exc:
            raise InvalidArgument(f"{what}: its files are not a task ({type(exc).__name__})") from None
        expected = task_to_proto(loaded)
    if not (loaded.config.get("task") or {}).get("name"):
        expected.task_name = claimed.task_name  # the folder's name: not in the digest
    return expected


def verify_harness(row: dict, import_format: str) -> dict:
    """The harness record to store for an export's harness row, recomputed; InvalidArgument otherwise.
    `import_format` is the restored run's (an import's agents are pinned by it)."""
    from hemra.services.domain import harnesses
    from hemra.services.domain.harnesses import harness_to_proto

    digest = row["digest"]
    what = f"harness {row['harness_name'][:100]!r} ({digest})"
    claimed = _parse(row["record"], pb.Harness(), what)
    if claimed.digest != digest or claimed.harness_name != row["harness_name"]:
        raise InvalidArgument(f"{what}: its record names another digest or harness")
    if claimed.kind == "builtin":
        if claimed.harness_name not in harnesses.BUILTINS or harnesses.builtin(claimed.harness_name).digest != digest:
            raise InvalidArgument(f"{what}: not the digest of a built-in harness; refused")
        expected = harness_to_proto(harnesses.builtin(claimed.harness_name), claimed.model)
    elif claimed.kind == "import":
        source = import_format.split(" ")[0]
        pinned = digests.sha256(
            f"imported agent\0{source}\0{claimed.agent}\0{claimed.agent_version}\0{claimed.model}".encode()
        )
        if not import_format or pinned != digest:
            raise InvalidArgument(f"{what}: not the digest of an imported agent; refused")
        expected = pb.Harness(
            name=f"harnesses/{digest}",
            digest=digest,
            harness_name=claimed.agent,
            kind="import",
            agent=claimed.agent,
            agent_version=claimed.agent_version,
            model=claimed.model,
        )
    else:
        # A file declaring MCP servers hashes with what its driver hands the agent (services/common/mcp.py).
        if digests.sha256(claimed.source_text.encode()) != digest and not _declares_mcp(claimed.source_text):
            raise InvalidArgument(f"{what}: its harness file's text does not hash to its digest; refused")
        expected = _load_harness(claimed, what)
        if expected.digest != digest:
            raise InvalidArgument(f"{what}: its harness file's text does not hash to its digest; refused")
    _refuse_unless_same(claimed, expected, what)
    return json_format.MessageToDict(expected)


def _declares_mcp(text: str) -> bool:
    try:
        return "mcp_server" in tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return False


def _load_harness(claimed: pb.Harness, what: str) -> pb.Harness:
    from hemra.services.domain import harnesses
    from hemra.services.domain.harnesses import harness_to_proto
    from hemra.services.domain.planerrors import PlanError

    with tempfile.TemporaryDirectory(prefix="hemra-verify-") as scratch:
        path = Path(scratch) / "harness.toml"
        path.write_text(claimed.source_text, encoding="utf-8")
        try:
            loaded = harnesses.load(path)
        except PlanError as exc:
            message = str(exc).replace(str(path), "<harness file>")
            raise InvalidArgument(f"{what}: its text is not a harness file ({message})") from None
    if loaded.model and claimed.model != loaded.model:
        raise InvalidArgument(f"{what}: its record's model differs from its file's; refused")
    expected = harness_to_proto(loaded, claimed.model)
    if not tomllib.loads(claimed.source_text).get("name"):  # the file's name then: not in the digest
        expected.harness_name = claimed.harness_name
    expected.source_path = claimed.source_path  # where it was read from, elsewhere: kept as said
    return expected
