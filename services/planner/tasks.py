"""Load a Harbor-format task folder and pin it by the digest of its files."""

import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from services import digests
from services.executor.sandboxes.base import ISOLATIONS
from services.planner import dockerfile
from services.planner.errors import PlanError

#: Never part of a task: version control and interpreter caches.
_IGNORED = {".git", "__pycache__", ".DS_Store"}
DEFAULT_AGENT_TIMEOUT = 900.0
DEFAULT_VERIFIER_TIMEOUT = 600.0


@dataclass
class TaskFile:
    path: str
    data: bytes
    executable: bool

    @property
    def digest(self) -> str:
        return digests.sha256(self.data)


@dataclass
class LoadedTask:
    folder: Path
    digest: str
    task_name: str
    instruction: str
    files: list[TaskFile]
    config: dict
    environment: dockerfile.EnvironmentPlan
    agent_timeout: float
    verifier_timeout: float
    verifier_env: dict[str, str] = field(default_factory=dict)
    solution_env: dict[str, str] = field(default_factory=dict)
    #: [verifier] isolation ("" when the task does not say).
    verifier_isolation: str = ""

    @property
    def has_solution(self) -> bool:
        return any(f.path == "solution/solve.sh" for f in self.files)


def read_files(folder: Path) -> list[TaskFile]:
    files = []
    for root, dirs, names in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d not in _IGNORED)
        for name in sorted(names):
            if name in _IGNORED:
                continue
            path = Path(root) / name
            if path.is_symlink() and not path.resolve().is_relative_to(folder.resolve()):
                raise PlanError(f"{path}: symlink points outside the task")
            mode = path.stat().st_mode
            files.append(TaskFile(path.relative_to(folder).as_posix(), path.read_bytes(), bool(mode & 0o111)))
    return files


def task_digest(files: list[TaskFile]) -> str:
    """sha256 over every file's path, executable bit and content digest, in path order."""
    return digests.task_digest((f.path, f.executable, f.digest) for f in files)


#: Harbor's package content hash covers these (besides task.toml, instruction.md, README.md).
_HARBOR_FOLDERS = ("environment/", "tests/", "solution/", "steps/")
_HARBOR_IGNORED_SUFFIXES = (".pyc", ".swp", ".swo")


def harbor_content_hash(files: list[TaskFile]) -> str:
    """Harbor's package content hash (its lock.json `digest`), to check a folder is the one a job ran."""
    chosen = [f for f in files if f.path in ("task.toml", "instruction.md", "README.md")
              or (f.path.startswith(_HARBOR_FOLDERS) and not f.path.endswith(_HARBOR_IGNORED_SUFFIXES))]
    lines = "".join(f"{f.path}\0{f.digest.removeprefix('sha256:')}\n" for f in sorted(chosen, key=lambda f: f.path))
    return digests.sha256(lines.encode())


def load_task(folder: Path) -> LoadedTask:
    """Read and check one task. Raises PlanError naming the file and the problem."""
    config = _read_toml(folder / "task.toml")
    for required in ("instruction.md", "tests/test.sh"):
        if not (folder / required).is_file():
            raise PlanError(f"{folder / required}: missing (every task needs {required})")
    if not (folder / "environment").is_dir():
        raise PlanError(f"{folder / 'environment'}: missing (every task needs an environment/ folder)")
    if config.get("steps"):
        raise PlanError(f"{folder / 'task.toml'}: multi-step tasks ([[steps]]) are not supported yet")
    files = read_files(folder)
    env_section = _table(config, "environment", folder)
    environment = _environment(folder, env_section)
    return LoadedTask(
        folder=folder, digest=task_digest(files),
        task_name=str(_table(config, "task", folder).get("name") or folder.name),
        instruction=(folder / "instruction.md").read_text(encoding="utf-8", errors="replace"),
        files=files, config=config, environment=environment,
        agent_timeout=_seconds(_table(config, "agent", folder), "timeout_sec", DEFAULT_AGENT_TIMEOUT, folder),
        verifier_timeout=_seconds(_table(config, "verifier", folder), "timeout_sec", DEFAULT_VERIFIER_TIMEOUT, folder),
        verifier_env=_env_table(_table(config, "verifier", folder), folder, "verifier"),
        solution_env=_env_table(_table(config, "solution", folder), folder, "solution"),
        verifier_isolation=_isolation(_table(config, "verifier", folder), folder),
    )


def _read_toml(path: Path) -> dict:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise PlanError(f"{path}: missing (every task needs task.toml)") from None
    except tomllib.TOMLDecodeError as exc:
        raise PlanError(f"{path}: malformed TOML: {exc}") from None
    except UnicodeDecodeError:
        raise PlanError(f"{path}: not UTF-8 text") from None


def _table(config: dict, key: str, folder: Path) -> dict:
    value = config.get(key, {})
    if not isinstance(value, dict):
        raise PlanError(f"{folder / 'task.toml'}: [{key}] must be a table")
    return value


def _seconds(section: dict, key: str, default: float, folder: Path) -> float:
    value = section.get(key)
    if value is None:
        return default
    if not isinstance(value, (int, float)) or isinstance(value, bool) or value <= 0:
        raise PlanError(f"{folder / 'task.toml'}: {key} must be a positive number of seconds")
    return float(value)


def _isolation(section: dict, folder: Path) -> str:
    value = section.get("isolation", "")
    if value not in ("", *ISOLATIONS):
        raise PlanError(f"{folder / 'task.toml'}: [verifier] isolation must be one of {', '.join(ISOLATIONS)} "
                        f"(got {value!r})")
    return value


def _env_table(section: dict, folder: Path, name: str) -> dict[str, str]:
    env = section.get("env", {})
    if not isinstance(env, dict) or not all(isinstance(v, (str, int, float)) for v in env.values()):
        raise PlanError(f"{folder / 'task.toml'}: [{name}].env must map names to strings")
    return {str(k): str(v) for k, v in env.items()}


def _expand(context: Path, copy: dockerfile.Copy, path: Path) -> list[dockerfile.Copy]:
    """A COPY source with wildcards becomes one step per match (into a folder)."""
    if not any(c in copy.source for c in "*?["):
        if not (context / copy.source).exists():
            raise PlanError(f"{path}: line {copy.line}: COPY source {copy.source!r} does not exist")
        return [copy]
    matches = sorted(p.relative_to(context).as_posix() for p in context.glob(copy.source))
    if not matches:
        raise PlanError(f"{path}: line {copy.line}: COPY source {copy.source!r} matches no file")
    if len(matches) > 1 and not copy.destination.endswith("/"):
        raise PlanError(f"{path}: line {copy.line}: COPY of several files needs a destination ending in /")
    return [dockerfile.Copy(m, copy.destination, copy.line) for m in matches]


def _environment(folder: Path, section: dict) -> dockerfile.EnvironmentPlan:
    path = folder / "environment" / "Dockerfile"
    if path.is_file():
        try:
            plan = dockerfile.parse(path.read_text(encoding="utf-8"))
        except dockerfile.DockerfileError as exc:
            raise PlanError(f"{path}: {exc}") from None
        plan.copies = [expanded for copy in plan.copies for expanded in _expand(folder / "environment", copy, path)]
    else:
        plan = dockerfile.EnvironmentPlan(base_image=str(section.get("docker_image") or ""), workdir="/app")
    if section.get("workdir"):
        plan.workdir = str(section["workdir"])
    plan.env.update({str(k): str(v) for k, v in (section.get("env") or {}).items()})
    return plan
