"""Datasets from the Harbor registry: a registry.json (a URL or a file), tasks fetched from their git
repositories at their pinned commits the way Harbor fetches them (a blob-less shallow clone, a
sparse checkout, the exact commit fetched), and kept under HEMRA_HOME as Harbor-format task
folders, pinned by HEMRA's digest like any folder.

A pinned dataset is used from its copy: runs of `harbor:NAME@VERSION` read no registry and no
repository once it is pinned (offline, identical). `hemra datasets pin` pins again from the
registry. An entry whose commit is not a full hash ("HEAD", a short hash) is refused unless the
caller allows it, and is then pinned at the commit fetched.
"""

import hashlib
import json
import os
import re
import shutil
import subprocess
import time
import urllib.parse
from dataclasses import asdict, dataclass
from pathlib import Path

from hemra.services.common import offline, parsing
from hemra.services.domain.planerrors import NotFound, PlanError
from hemra.services.planner import pinned as pinned_copy
from hemra.services.planner.pinned import SOURCE_FILE, source_of

PREFIX = "harbor:"
REGISTRY_ENV = "HEMRA_HARBOR_REGISTRY"
DEFAULT_REGISTRY = "https://raw.githubusercontent.com/laude-institute/harbor/main/registry.json"
MAX_REGISTRY_BYTES = 64 * 1024 * 1024
GIT_TIMEOUT_SECS = 600
_COMMIT = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$")


@dataclass(frozen=True)
class RegistryTask:
    name: str
    git_url: str
    commit: str
    path: str


@dataclass(frozen=True)
class RegistryDataset:
    name: str
    version: str
    tasks: tuple[RegistryTask, ...]


def location() -> str:
    return os.environ.get(REGISTRY_ENV) or DEFAULT_REGISTRY


def cache_root(home: Path) -> Path:
    return home / "cache" / "harbor"


def pinned_folder(home: Path, name: str, version: str) -> Path:
    return cache_root(home) / name / version


def resolve(name: str, version: str, home: Path, allow_head: bool = False, refresh: bool = False) -> Path:
    """The folder of task folders pinned for registry dataset `name` at `version` ("" for the
    registry's default version): the pinned copy when there is one (and not `refresh`), else
    fetched now from the registry and pinned."""
    if version and not refresh and (pinned_folder(home, name, version) / SOURCE_FILE).is_file():
        return pinned_folder(home, name, version)
    where = location()
    at = f"{PREFIX}{name}@{version}" if version else f"{PREFIX}{name}"
    if why := offline.refused(f"dataset {at} from the registry {where} and its tasks' git repositories"):
        raise PlanError(f"{why} (not pinned here, nor in the store)")
    entry = pick(read_registry(where), name, version)
    folder = pinned_folder(home, entry.name, entry.version)
    unpinned = [t for t in entry.tasks if not _COMMIT.match(t.commit)]
    kept = source_of(folder)
    if kept is not None and (not refresh or (not unpinned and kept.get("entry_digest") == _entry_digest(entry))):
        return folder  # pinned already (and, pinning again, the registry still pins the same commits)
    if unpinned and not allow_head:
        raise PlanError(
            f"dataset {PREFIX}{entry.name}@{entry.version}: {len(unpinned)} task(s) are not pinned to a commit "
            f"({unpinned[0].name}: {unpinned[0].commit or 'no commit'}); pin them at the commit fetched now "
            f"with: hemra datasets pin {PREFIX}{entry.name}@{entry.version} --allow-head"
        )
    return fetch(entry, where, folder)


def read_registry(where: str) -> list[RegistryDataset]:
    """A legacy registry.json: a JSON array of {name, version, tasks: [{name, git_url,
    git_commit_id, path}]}. PlanError naming the registry and the problem, or NotFound."""
    data = _read_bytes(where)
    try:
        entries = parsing.load_json(data, f"registry {where}", limit=MAX_REGISTRY_BYTES)
    except parsing.Unbounded as exc:
        raise PlanError(str(exc)) from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise PlanError(f"registry {where}: not JSON: {exc}") from None
    if not isinstance(entries, list):
        raise PlanError(f"registry {where}: must be a JSON array of datasets")
    return [_dataset(where, i, entry) for i, entry in enumerate(entries)]


def _read_bytes(where: str) -> bytes:
    scheme = urllib.parse.urlsplit(where).scheme
    try:
        if scheme in ("http", "https"):
            import httpx

            response = httpx.get(where, timeout=60, follow_redirects=True)
            response.raise_for_status()
            return response.content[:MAX_REGISTRY_BYTES]
        path = Path(urllib.parse.urlsplit(where).path if scheme == "file" else where).expanduser()
        with path.open("rb") as f:
            return f.read(MAX_REGISTRY_BYTES)
    except OSError as exc:
        raise NotFound(f"registry {where}: cannot read: {exc.strerror or exc}") from None
    except Exception as exc:  # httpx's errors: unreachable, a 404, a timeout
        raise NotFound(f"registry {where}: cannot fetch: {exc}") from None


def _dataset(where: str, index: int, entry) -> RegistryDataset:
    at = f"registry {where}: dataset {index + 1}"
    if (
        not isinstance(entry, dict)
        or not isinstance(entry.get("name"), str)
        or not isinstance(entry.get("tasks"), list)
    ):
        raise PlanError(f"{at}: needs a name and a list of tasks")
    if not _NAME.match(entry["name"]) or not _NAME.match(str(entry.get("version", "")) or "x"):
        raise PlanError(
            f"{at}: {entry['name'][:100]!r} @ {str(entry.get('version'))[:100]!r} is not a dataset name and version"
        )
    tasks = []
    for number, task in enumerate(entry["tasks"], 1):
        if not isinstance(task, dict) or not all(isinstance(task.get(k, ""), str) for k in ("name", "git_url", "path")):
            raise PlanError(f"{at} ({entry['name']}): task {number} needs name, git_url and path as strings")
        path = task.get("path") or task.get("name", "")
        if not task.get("name") or not _NAME.match(task["name"]) or ".." in path.split("/") or path.startswith("/"):
            raise PlanError(f"{at} ({entry['name']}): task {number}: {task.get('name')!r} / {path!r} is not a task")
        tasks.append(RegistryTask(task["name"], task.get("git_url", ""), str(task.get("git_commit_id") or ""), path))
    return RegistryDataset(entry["name"], str(entry.get("version", "")), tuple(tasks))


def pick(datasets: list[RegistryDataset], name: str, version: str) -> RegistryDataset:
    """The entry for `name` at `version`; without one, "head" if listed, else the highest version."""
    named = [d for d in datasets if d.name == name]
    if not named:
        raise NotFound(f"dataset {PREFIX}{name}: not in the registry {location()}")
    if version:
        found = [d for d in named if d.version == version]
        if not found:
            versions = ", ".join(sorted(d.version for d in named))
            raise NotFound(f"dataset {PREFIX}{name}@{version}: no such version (the registry has {versions})")
        return found[0]
    heads = [d for d in named if d.version == "head"]
    return heads[0] if heads else max(named, key=lambda d: _version_key(d.version))


def _version_key(version: str):
    return [(0, int(p), "") if p.isdigit() else (1, 0, p) for p in re.split(r"[.-]", version)]


def fetch(entry: RegistryDataset, where: str, folder: Path) -> Path:
    """Fetch every task of `entry` into a fresh copy, then put it in `folder` in one rename."""
    local = [t for t in entry.tasks if not t.git_url]
    if local:
        raise PlanError(
            f"dataset {PREFIX}{entry.name}@{entry.version}: task {local[0].name} has no git_url "
            "(tasks local to a registry are not supported: give their folder with -d)"
        )
    with pinned_copy.writing(folder) as work:
        pinned = []
        by_repo: dict[str, list[RegistryTask]] = {}
        for task in entry.tasks:
            by_repo.setdefault(task.git_url, []).append(task)
        for url, tasks in by_repo.items():
            pinned += _fetch_repo(url, tasks, work)
        record = {
            "source": "harbor",
            "registry": where,
            "name": entry.name,
            "version": entry.version,
            "fetched_time": time.time(),
            "entry_digest": _entry_digest(entry),
            "tasks": [asdict(t) for t in sorted(pinned, key=lambda t: t.name)],
        }
        pinned_copy.describe(work, entry.name, record)
    return folder


def _entry_digest(entry: RegistryDataset) -> str:
    data = json.dumps([asdict(t) for t in entry.tasks], sort_keys=True).encode()
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _fetch_repo(url: str, tasks: list[RegistryTask], into: Path) -> list[RegistryTask]:
    """Harbor's way: a blob-less shallow clone without checkout, a sparse checkout of the tasks'
    paths, then per commit: fetch it alone, check it out, copy its tasks."""
    clone = into / ".clone"
    shutil.rmtree(clone, ignore_errors=True)
    _git(url, "clone", "-q", "--filter=blob:none", "--depth", "1", "--no-checkout", url, str(clone))
    _git(url, "-C", str(clone), "sparse-checkout", "set", "--no-cone", *sorted({f"/{t.path}/" for t in tasks}))
    pinned = []
    by_commit: dict[str, list[RegistryTask]] = {}
    for task in tasks:
        by_commit.setdefault(task.commit, []).append(task)
    for commit, group in by_commit.items():
        if _COMMIT.match(commit):
            _git(url, "-C", str(clone), "fetch", "-q", "--depth", "1", "origin", commit)
            _git(url, "-C", str(clone), "checkout", "-q", commit)
        else:  # allowed unpinned: the tip, pinned at what it is now
            _git(url, "-C", str(clone), "checkout", "-q", "FETCH_HEAD" if _has_fetch_head(clone) else "HEAD")
        resolved = _git(url, "-C", str(clone), "rev-parse", "HEAD").strip()
        for task in group:
            source = clone / task.path
            if not (source / "task.toml").is_file():
                raise PlanError(f"{url}@{resolved[:12]}: {task.path}/task.toml: missing (task {task.name})")
            shutil.copytree(source, into / task.name, symlinks=True, ignore=shutil.ignore_patterns(".git"))
            pinned.append(RegistryTask(task.name, url, resolved, task.path))
    shutil.rmtree(clone, ignore_errors=True)
    return pinned


def _has_fetch_head(clone: Path) -> bool:
    return (clone / ".git" / "FETCH_HEAD").is_file()


def _git(url: str, *args: str) -> str:
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "true", "LC_ALL": "C"}
    try:
        done = subprocess.run(
            ["git", *args], capture_output=True, text=True, timeout=GIT_TIMEOUT_SECS, env=env, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise NotFound(f"repository {url}: git {args[0] if args[0] != '-C' else args[2]} failed: {exc}") from None
    if done.returncode != 0:
        why = next((line for line in reversed(done.stderr.splitlines()) if line.strip()), "failed")
        raise NotFound(f"repository {url}: {why.strip()[:300]}")
    return done.stdout
