"""Datasets from the Hugging Face Hub: `hf:ORG/NAME@REVISION`, its rows made Harbor-format tasks
by a mapping file (which columns are the task's name, instruction, tests, solution and
environment), fetched with huggingface_hub at a commit and read from the snapshot's own files
(parquet, JSON lines or JSON), never by name from a datasets cache. The tasks are written under
HEMRA_HOME and pinned by HEMRA's digest like any folder.

The mapping is `hf/ORG/NAME.toml` in the dataset search path (HEMRA_DATASETS_PATH, `datasets/`
beside the run file, HEMRA_HOME/datasets):

    files = ["data/test-*.parquet"]   # globs in the snapshot
    name = "instance_id"              # the column naming each task
    instruction = "problem"           # instruction.md
    tests = "test_sh"                 # tests/test.sh (writes /logs/verifier/reward.txt)
    solution = "solve_sh"             # solution/solve.sh (optional)
    dockerfile = "FROM debian:bookworm-slim\\nWORKDIR /app\\n"   # or dockerfile_column = "..."
    agent_timeout_secs = 600
    verifier_timeout_secs = 120
"""

import fnmatch
import hashlib
import json
import re
import tomllib
from pathlib import Path

from hemra.services.common import offline
from hemra.services.domain.planerrors import NotFound, PlanError
from hemra.services.planner import pinned
from hemra.services.planner.pinned import SOURCE_FILE

PREFIX = "hf:"
MAX_ROWS = 100_000
_REPO = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,95}/[A-Za-z0-9][A-Za-z0-9._-]{0,95}$")
_COMMIT = re.compile(r"^[0-9a-f]{40}$")
_TASK = re.compile(r"[^A-Za-z0-9._-]+")
_KEYS = {
    "files",
    "name",
    "instruction",
    "tests",
    "solution",
    "dockerfile",
    "dockerfile_column",
    "agent_timeout_secs",
    "verifier_timeout_secs",
}


def resolve(repo: str, revision: str, home: Path, mapping_dirs: list[Path]) -> Path:
    """The folder of tasks made from `repo` at `revision` by its mapping."""
    if not _REPO.match(repo):
        raise PlanError(f"dataset {PREFIX}{repo}: expected {PREFIX}ORG/NAME@REVISION")
    if not revision:
        raise PlanError(f"dataset {PREFIX}{repo}: give a revision ({PREFIX}{repo}@<commit or branch>)")
    mapping_path = mapping_file(repo, mapping_dirs)
    mapping = _mapping(mapping_path)
    digest = mapping_digest(mapping_path)
    if _COMMIT.match(revision) and (pinned_folder(home, repo, revision, digest) / SOURCE_FILE).is_file():
        return pinned_folder(home, repo, revision, digest)  # pinned at a commit: the hub is not asked
    fetched = snapshot(repo, revision)
    commit = fetched.name
    folder = pinned_folder(home, repo, commit, digest)
    if (folder / SOURCE_FILE).is_file():
        return folder
    files = _data_files(repo, fetched, mapping)
    found = [row for path in files for row in rows(path)]
    return _write(repo, commit, mapping, mapping_path, files, found, fetched, folder)


def pinned_folder(home: Path, repo: str, commit: str, mapping: str) -> Path:
    return home / "cache" / "hf" / repo / commit / mapping


def mapping_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def registry_text(mapping: str) -> str:
    """Where a copy came from, as its source text shows it: the hub, and which mapping made it
    (two mappings of one commit are two datasets)."""
    return f"huggingface, mapping {mapping}"


def mapping_file(repo: str, dirs: list[Path]) -> Path:
    for root in dirs:
        path = root / "hf" / f"{repo}.toml"
        if path.is_file():
            return path
    where = ", ".join(str(d / "hf" / f"{repo}.toml") for d in dirs)
    raise NotFound(f"dataset {PREFIX}{repo}: no mapping file (looked for {where})")


def _mapping(path: Path) -> dict:
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise PlanError(f"{path}: cannot read: {exc}") from None
    unknown = sorted(set(data) - _KEYS)
    if unknown:
        raise PlanError(f"{path}: unknown key {unknown[0]!r} (known: {', '.join(sorted(_KEYS))})")
    for key in ("files", "name", "instruction", "tests"):
        if key not in data:
            raise PlanError(f"{path}: needs {key}")
    if not isinstance(data["files"], list) or not all(isinstance(f, str) for f in data["files"]):
        raise PlanError(f"{path}: files must be a list of globs")
    if ("dockerfile" in data) == ("dockerfile_column" in data):
        raise PlanError(f"{path}: give dockerfile or dockerfile_column (one of them)")
    data["_path"] = str(path)
    return data


def snapshot(repo: str, revision: str, prefix: str = PREFIX) -> Path:
    """The snapshot folder of `repo` at `revision` (a commit or a branch), fetched or cached."""
    if not _REPO.match(repo):
        raise PlanError(f"dataset {prefix}{repo}: expected {prefix}ORG/NAME@REVISION")
    try:
        import huggingface_hub
    except ImportError:  # pragma: no cover - a dependency of the project
        raise PlanError("dataset hf:…: huggingface_hub is not installed") from None
    if why := offline.refused(f"dataset {prefix}{repo}@{revision} from the Hugging Face Hub"):
        try:  # offline, the hub's own cache may hold it
            return Path(
                huggingface_hub.snapshot_download(repo, repo_type="dataset", revision=revision, local_files_only=True)
            )
        except Exception:  # not in the hub's cache
            raise PlanError(f"{why} (not in its cache)") from None
    try:
        return Path(huggingface_hub.snapshot_download(repo, repo_type="dataset", revision=revision))
    except Exception as exc:  # the hub's many errors: not found, offline and not cached, unreachable
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise NotFound(f"dataset {prefix}{repo}@{revision}: {first[:300]}") from None


def _data_files(repo: str, snapshot: Path, mapping: dict) -> list[Path]:
    every = sorted(p.relative_to(snapshot).as_posix() for p in snapshot.rglob("*") if p.is_file())
    chosen = [p for p in every if any(fnmatch.fnmatchcase(p, g) for g in mapping["files"])]
    if not chosen:
        raise PlanError(
            f"{mapping['_path']}: files {mapping['files']} match nothing in {repo} (it has {len(every)} files)"
        )
    return [snapshot / p for p in chosen]


def rows(path: Path) -> list[dict]:
    try:
        if path.suffix == ".parquet":
            import pyarrow.parquet as pq

            return pq.read_table(path).to_pylist()[:MAX_ROWS]
        text = path.read_text()
        if path.suffix == ".jsonl":
            return [json.loads(line) for line in text.splitlines() if line.strip()][:MAX_ROWS]
        data = json.loads(text)
        return data if isinstance(data, list) else [data]
    except Exception as exc:
        raise PlanError(f"{path.name}: cannot read its rows: {exc}") from None


def _column(mapping: dict, key: str, row: dict, file: str):
    column = mapping[key]
    if column not in row:
        raise PlanError(
            f"{mapping['_path']}: {key} = {column!r}: no such column in {file} (columns: {', '.join(sorted(row))})"
        )
    value = row[column]
    return "" if value is None else str(value)


def _write(repo, commit, mapping, mapping_path, files, rows, snapshot, folder: Path) -> Path:
    if not rows:
        raise PlanError(f"dataset {PREFIX}{repo}@{commit[:12]}: its files hold no rows")
    with pinned.writing(folder) as work:
        names: set[str] = set()
        for row in rows:
            file = files[0].name
            name = _TASK.sub("-", _column(mapping, "name", row, file)).strip("-.")[:150] or "task"
            if name in names:
                raise PlanError(f"dataset {PREFIX}{repo}: two rows name task {name!r}")
            names.add(name)
            _task(work / name, repo, name, mapping, row, file)
        record = {
            "source": "hf",
            "name": repo,
            "version": commit,
            "registry": registry_text(mapping_digest(mapping_path)),
            "revision": commit,
            "mapping": str(mapping_path),
            "files": [
                {"path": p.relative_to(snapshot).as_posix(), "sha256": hashlib.sha256(p.read_bytes()).hexdigest()}
                for p in files
            ],
            "tasks": [],
        }
        pinned.describe(work, repo.replace("/", "-"), record)
    return folder


def _task(folder: Path, repo: str, name: str, mapping: dict, row: dict, file: str) -> None:
    (folder / "tests").mkdir(parents=True)
    (folder / "environment").mkdir()
    agent = int(mapping.get("agent_timeout_secs", 600))
    verifier = int(mapping.get("verifier_timeout_secs", 120))
    (folder / "task.toml").write_text(
        f"[task]\nname = {json.dumps(repo.replace('/', '-') + '/' + name)}\n\n[agent]\ntimeout_sec = {agent}\n\n"
        f"[verifier]\ntimeout_sec = {verifier}\n"
    )
    (folder / "instruction.md").write_text(_column(mapping, "instruction", row, file))
    test = folder / "tests" / "test.sh"
    test.write_text(_column(mapping, "tests", row, file))
    test.chmod(0o755)
    if "solution" in mapping:
        (folder / "solution").mkdir()
        solve = folder / "solution" / "solve.sh"
        solve.write_text(_column(mapping, "solution", row, file))
        solve.chmod(0o755)
    dockerfile = (
        _column(mapping, "dockerfile_column", row, file) if "dockerfile_column" in mapping else mapping["dockerfile"]
    )
    (folder / "environment" / "Dockerfile").write_text(dockerfile)
