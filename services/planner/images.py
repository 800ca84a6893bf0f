"""Task images, built while a run resolves (docker sandbox only).

A Dockerfile that does not build, or an environment whose repositories HEMRA's history layer
cannot strip, stops the run before anything is recorded, naming the task and keeping the
build's output; the executors then find every image ready (images are cached
by task digest, so they never build twice). An executor on another engine still builds what
its engine lacks when an attempt starts.
"""

from pathlib import Path

from hemra.services.domain.planerrors import PlanError
from hemra.services.domain.tasks import LoadedTask
from hemra.services.environments.errors import SandboxError
from hemra.services.environments.images import BuildFailed, StripFailed, ensure_image


def build(tasks: list[LoadedTask], base_image: str, home: Path, kept=frozenset()) -> None:
    """Build each task's image (blocking), or raise PlanError for the first that fails. Tasks
    named in `kept` (the run keeps their history) are built without HEMRA's history layer."""
    for task in tasks:
        try:
            ensure_image(task, task.folder, base_image, keep_history=task.task_name in kept)
        except StripFailed as exc:
            raise PlanError(
                f"{exc}; run it only with --allow-history {task.task_name!r} (run file: allow_history), "
                f"keeping its history (build log: {_keep_log(home, task, exc.log)})"
            ) from None
        except BuildFailed as exc:
            raise PlanError(f"{exc} (build log: {_keep_log(home, task, exc.log)})") from None
        except SandboxError as exc:
            raise PlanError(f"sandbox docker: {exc}") from None


def _keep_log(home: Path, task: LoadedTask, log: str) -> Path:
    folder = home / "logs" / "builds"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{task.task_name.replace('/', '-')}-{task.digest.removeprefix('sha256:')[:12]}.log"
    path.write_text(log)
    return path
