"""Find datasets by name, `name@<digest prefix>` or path, and pin them by digest."""

import fnmatch
import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path

from hemra.services.common import parsing
from hemra.services.domain.planerrors import NotFound, PlanError
from hemra.services.domain.tasks import LoadedTask, load_task
from hemra.services.planner import hf, pinned, registry, swebench

#: Prefixes of datasets that come from a source other than a folder.
SOURCES = (registry.PREFIX, hf.PREFIX, swebench.PREFIX)
_HEX = re.compile(r"^[0-9a-f]{1,64}$")
#: The repository's bundled datasets (examples/), found relative to this file.
BUNDLED = Path(__file__).resolve().parents[2] / "examples"


@dataclass
class LoadedDataset:
    name: str
    source: Path
    digest: str
    tasks: list[LoadedTask]
    #: Where a registry dataset came from (its hemra-source.json); None for a plain folder.
    origin: dict | None = None

    def source_text(self) -> str:
        if not self.origin:
            return str(self.source)
        source = self.origin.get("source")
        prefix = {"hf": hf.PREFIX, "swebench": swebench.PREFIX}.get(source, registry.PREFIX)
        if source == "swebench" and "file" in self.origin:
            return f"{prefix}{self.origin['file']}"
        return f"{prefix}{self.origin['name']}@{self.origin['version']} ({self.origin['registry']})"


def search_path(home: Path, base: Path | None) -> list[Path]:
    """Where dataset names are looked up, in order."""
    dirs = [Path(p) for p in os.environ.get("HEMRA_DATASETS_PATH", "").split(os.pathsep) if p]
    if base is not None:
        dirs.append(base / "datasets")
    dirs += [home / "datasets", BUNDLED]
    return dirs


def parse_ref(ref: str) -> tuple[str, str, str]:
    """(name, version, digest prefix) of NAME[@version][@<digest prefix>]. A lone @ part is a
    registry dataset's version (harbor:NAME@2.0); otherwise it is a digest prefix when it is
    hexadecimal (or starts with "sha256:"), else a version (NAME@1.0: a pinned registry dataset)."""
    name, *parts = ref.split("@")
    if len(parts) > 2:
        raise PlanError(f"dataset {ref}: expected NAME[@version][@<digest prefix>]")
    if len(parts) == 2:
        return name, parts[0], parts[1]
    if not parts:
        return name, "", ""
    digest_like = parts[0].startswith("sha256:") or bool(_HEX.match(parts[0]))
    if name.startswith(SOURCES) and not parts[0].startswith("sha256:") or not digest_like:
        return name, parts[0], ""
    return name, "", parts[0]


def resolve(ref: str, home: Path, base: Path | None = None, allow_head: bool = False) -> LoadedDataset:
    """Load the dataset `ref` names. Raises NotFound or PlanError in one line."""
    name, version, prefix = parse_ref(ref)
    if name.startswith(registry.PREFIX):
        folder = registry.resolve(name.removeprefix(registry.PREFIX), version, home, allow_head)
    elif name.startswith(swebench.PREFIX):
        source = name.removeprefix(swebench.PREFIX)
        if swebench.is_file_ref(source) and version:  # a file has no versions: NAME@<digest prefix>
            version, prefix = "", prefix or version
        folder = swebench.resolve(source, version, home, base)
    elif name.startswith(hf.PREFIX):
        folder = hf.resolve(name.removeprefix(hf.PREFIX), version, home, search_path(home, base)[:-1])
    elif version:
        folder = _pinned(name, version, home)
    else:
        folder = _find(name, home, base)
    dataset = load_dataset(folder)
    if prefix and not dataset.digest.removeprefix("sha256:").startswith(prefix.removeprefix("sha256:")):
        raise PlanError(
            f"dataset {name}: pinned @{prefix} but {folder} is now {dataset.digest[:19]}; its tasks changed"
        )
    return dataset


def pin(ref: str, home: Path, allow_head: bool = False) -> LoadedDataset:
    """Pin `ref` again from its source: a registry dataset is read from the registry and fetched
    anew (a changed one gets a new digest, and refs pinned to the old one refuse it)."""
    name, version, prefix = parse_ref(ref)
    if name.startswith(registry.PREFIX):
        registry.resolve(name.removeprefix(registry.PREFIX), version, home, allow_head, refresh=True)
    return resolve(ref, home, None, allow_head)


def _pinned(name: str, version: str, home: Path) -> Path:
    """NAME@version without a prefix: a registry dataset pinned here before (no network)."""
    folder = registry.pinned_folder(home, name, version)
    if (folder / pinned.SOURCE_FILE).is_file():
        return folder
    raise NotFound(
        f"dataset {name}@{version}: no such pinned dataset; from the Harbor registry: "
        f"-d {registry.PREFIX}{name}@{version} (or hemra datasets pin {registry.PREFIX}{name}@{version})"
    )


def _find(name: str, home: Path, base: Path | None) -> Path:
    candidate = Path(name).expanduser()
    if "/" in name or name.startswith(".") or (base is None and candidate.is_dir()):
        folder = candidate if candidate.is_absolute() or base is None else base / candidate
        if not folder.is_dir():
            raise NotFound(f"dataset {name}: no such folder {folder}")
        return folder
    for root in search_path(home, base):
        if (root / name).is_dir():
            return root / name
    where = ", ".join(str(p) for p in search_path(home, base))
    raise NotFound(f"dataset {name!r} not found (looked in {where})")


def load_dataset(folder: Path) -> LoadedDataset:
    folder = folder.resolve()
    name = _dataset_name(folder)
    if (folder / "task.toml").is_file():
        tasks = [load_task(folder)]
    else:
        tasks = [load_task(d) for d in sorted(folder.iterdir()) if d.is_dir() and (d / "task.toml").exists()]
        loose = [
            d
            for d in sorted(folder.iterdir())
            if d.is_dir() and not (d / "task.toml").exists() and not d.name.startswith(".")
        ]
        if loose:
            raise PlanError(f"{loose[0] / 'task.toml'}: missing (every task needs task.toml)")
    if not tasks:
        raise PlanError(f"dataset {folder}: holds no tasks (folders with task.toml)")
    seen: dict[str, Path] = {}
    for task in tasks:
        if task.task_name in seen:
            raise PlanError(
                f"dataset {folder}: task name {task.task_name!r} used by {seen[task.task_name]} and {task.folder}"
            )
        seen[task.task_name] = task.folder
    lines = "".join(f"{t.task_name}\0{t.digest}\n" for t in sorted(tasks, key=lambda t: t.task_name))
    digest = "sha256:" + hashlib.sha256(lines.encode()).hexdigest()
    origin = pinned.source_of(folder)
    _task_origins(origin, tasks)
    return LoadedDataset(name=name, source=folder, digest=digest, tasks=tasks, origin=origin)


def _task_origins(origin: dict | None, tasks: list[LoadedTask]) -> None:
    """Each task's commit or revision, from what a source's copy says of itself."""
    if not origin:
        return
    source = origin.get("source")
    if source == "harbor":
        fetched = {t.get("name"): t for t in origin.get("tasks", []) if isinstance(t, dict)}
        for task in tasks:
            entry = fetched.get(task.folder.name, {})
            task.origin = f"{entry.get('git_url')}@{entry.get('commit')}:{entry.get('path')}" if entry else ""
        return
    if source == "swebench" and "file" in origin:
        common = f"{swebench.PREFIX}{origin['file']}@{origin.get('version', '')}"
    else:
        common = f"{hf.PREFIX if source == 'hf' else swebench.PREFIX}{origin.get('name')}@{origin.get('revision', '')}"
    for task in tasks:
        task.origin = common


def _dataset_name(folder: Path) -> str:
    meta = folder / "dataset.toml"
    if meta.is_file():
        try:
            data = parsing.read_toml(meta)
        except parsing.Unreadable as exc:
            raise PlanError(str(exc)) from None
        except OSError as exc:  # gone since it was seen
            raise PlanError(f"{meta}: cannot be read: {exc.strerror or exc}") from None
        if data.get("name"):
            return str(data["name"])
    return folder.name


def select_tasks(tasks: list[LoadedTask], include: list[str], exclude: list[str]) -> list[LoadedTask]:
    """Tasks whose name or folder matches any `include` pattern (all when none) and no `exclude` one."""

    def matches(task: LoadedTask, patterns: list[str]) -> bool:
        names = (task.task_name, task.folder.name)
        return any(fnmatch.fnmatchcase(n, p) for p in patterns for n in names)

    return [t for t in tasks if (not include or matches(t, include)) and not matches(t, exclude)]
