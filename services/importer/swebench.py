"""Read a SWE-bench harness run: its final summary ("run report") and per-instance logs.

Only instances in resolved_ids pass. Every other submitted instance fails,
except those the harness itself attributes to the environment or could not
grade (infra_failure_ids, error_ids): those are infrastructure failures.
The summary is checked against the per-instance report.json files.
"""

import re
from pathlib import Path

from hemra.services.common import parsing
from hemra.services.domain.imported import COMPLETED, INFRA_FAILED, ImportedResults, ImportedTrial
from hemra.services.domain.importerrors import ImportProblem

#: Harness versions whose summary shapes we know (see docs/results-and-compare.md).
KNOWN_VERSIONS = re.compile(r"^(2\.0\.\d+|2\.1\.\d+|3\.0\.[0-9]+|4\.0\.\d+|4\.1\.0|5\.0\.[0-2])$")
_REQUIRED = ("submitted_ids", "resolved_ids", "unresolved_ids", "error_ids", "completed_ids")
_INFRA_KEYS = ("infra_failure_ids", "ambiguous_failure_ids", "failure_reasons")
_ID_LISTS = (
    "submitted_ids",
    "resolved_ids",
    "unresolved_ids",
    "error_ids",
    "completed_ids",
    "empty_patch_ids",
    "infra_failure_ids",
    "ambiguous_failure_ids",
    "incomplete_ids",
)
#: An instance ID: `<owner>__<repo>-<number>` (astropy__astropy-12907, django__django-11099), or a
#: derived benchmark's longer form (SWE-smith: `<owner>__<repo>.<commit>.<rule>__<hash>`). IDs name
#: folders of the logs: letters, digits, `_`, `-` and `.` only, no leading dot, never a path.
INSTANCE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}__[A-Za-z0-9][A-Za-z0-9_.-]{0,155}$")


def looks_like(root: Path) -> bool:
    return find_summary(root) is not None


def find_summary(root: Path) -> Path | None:
    found = _find_summary(root)
    return found[0] if found else None


def _find_summary(root: Path) -> tuple[Path, dict] | None:
    """The run report among the folder's *.json files, and what it holds. Each is read as an
    import reads files (regular files only, no link followed, within a size): a probe must not
    hang on a FIFO or read /dev/zero through a link."""
    for path in sorted(root.glob("*.json")):
        if path.is_dir() and not path.is_symlink():
            continue
        try:
            data = _read_json(path)
        except ValueError:  # not JSON (or not UTF-8): not a run report
            continue
        if isinstance(data, dict) and all(key in data for key in _REQUIRED):
            return path, data
    return None


def _read_json(path: Path):
    """A JSON file of the run (FileNotFoundError when it is absent); ImportProblem naming it
    when it is not a regular file, or too large or deep to read; ValueError when not JSON."""
    try:
        data, _ = parsing.read_regular(path, parsing.MAX_JSON_BYTES)
        return parsing.load_json(data, path)
    except parsing.NotRegular:
        if path.is_symlink():
            raise ImportProblem(f"{path}: symbolic links cannot be imported byte for byte") from None
        raise ImportProblem(f"{path}: only regular files and folders can be imported") from None
    except parsing.Unbounded as exc:
        raise ImportProblem(str(exc)) from None


def read_run(root: Path, version: str) -> ImportedResults:
    found = _find_summary(root)
    if found is None:
        raise ImportProblem(f"{root}: no SWE-bench run report (a JSON file with submitted_ids and resolved_ids)")
    summary_path, summary = found
    version = version or ("5.0.2" if "infra_failure_ids" in summary else "4.1.0")
    if not KNOWN_VERSIONS.match(version):
        raise ImportProblem(
            f"--swebench-version {version}: unknown (known: 2.0.x-2.1.x, 3.0.x, 4.0.x, 4.1.0, 5.0.0-5.0.2)"
        )
    _check_shape(summary_path, summary, version)
    _check_ids(summary_path, summary)
    model, run_id = _model_and_run(summary_path, root)
    logs = root / "logs" / "run_evaluation" / run_id / model
    if not logs.is_dir():
        raise ImportProblem(f"{logs}: missing (the per-instance logs of run {run_id})")
    _inside(root, logs)
    dataset = _dataset(root / "logs" / "run_evaluation" / run_id / "run.json")
    _check_against_logs(summary_path, summary, logs)
    # Grading rules changed between harness generations (e.g. SKIPPED in 5.x): runs pair
    # only with runs graded by the same major version.
    grader = f"swebench {version.split('.')[0]}.x:{dataset}"
    trials = [
        _trial(root, logs, summary, iid, dataset, model.replace("__", "/"), grader) for iid in summary["submitted_ids"]
    ]
    return ImportedResults("swebench", version, trials, _unsubmitted(summary_path, summary))


def _unsubmitted(path: Path, summary: dict) -> list[str]:
    """A warning for each list naming instance IDs that are not in submitted_ids: the harness
    grades only what was submitted, so those are not imported (nor counted). incomplete_ids is
    left out: it lists the dataset's instances without a prediction by design."""
    submitted = set(summary["submitted_ids"])
    warnings = []
    for key in _ID_LISTS:
        if key in ("submitted_ids", "incomplete_ids"):
            continue
        extra = list(dict.fromkeys(i for i in summary.get(key, []) if i not in submitted))
        if extra:
            shown = ", ".join(extra[:3]) + (f" and {len(extra) - 3} more" if len(extra) > 3 else "")
            warnings.append(
                f"{path.name}: {key} lists {len(extra)} instance ID{'s' if len(extra) > 1 else ''} "
                f"never submitted ({shown}); not imported"
            )
    return warnings


def _check_shape(path: Path, summary: dict, version: str) -> None:
    has_infra = all(key in summary for key in _INFRA_KEYS)
    if version.startswith("5.") and not has_infra:
        raise ImportProblem(
            f"{path}: a {version} run report needs {', '.join(_INFRA_KEYS)}; "
            f"is this a 4.x run? pass its --swebench-version"
        )
    if not version.startswith("5.") and any(key in summary for key in _INFRA_KEYS):
        raise ImportProblem(f"{path}: infra_failure_ids appear only in 5.x reports, not {version}")


def _check_ids(path: Path, summary: dict) -> None:
    """Every instance ID the report lists has the shape of one (it becomes a folder name)."""
    for key in _ID_LISTS:
        ids = summary.get(key, [])
        if not isinstance(ids, list):
            raise ImportProblem(f"{path}: {key} must be a list of instance IDs")
        seen = set()
        for iid in ids:
            if not isinstance(iid, str) or not INSTANCE_ID.fullmatch(iid):
                raise ImportProblem(
                    f"{path}: {key} lists {str(iid)[:200]!r}, which is not a SWE-bench instance ID "
                    f"(owner__repo-number: letters, digits, _, - and .)"
                )
            if iid in seen:  # the harness builds each list from a set of IDs: twice is not its report
                raise ImportProblem(f"{path}: {key} lists {iid} twice (a run report lists each instance once)")
            seen.add(iid)
    reasons = summary.get("failure_reasons", {})
    if not isinstance(reasons, dict):
        raise ImportProblem(f"{path}: failure_reasons must map instance IDs to reasons")


def _inside(root: Path, path: Path) -> None:
    """Refuse a path of the run that leads out of it (a symlink to elsewhere)."""
    if not path.resolve().is_relative_to(root.resolve()):
        raise ImportProblem(f"{path}: leads outside {root} (a symlink to {path.resolve()}); refused")


def _model_and_run(summary_path: Path, root: Path) -> tuple[str, str]:
    """`<model with / as __>.<run_id>.json`; the logs folder settles where the split goes."""
    stem = summary_path.name[: -len(".json")]
    runs = root / "logs" / "run_evaluation"
    for index in range(len(stem)):
        model, run_id = stem[:index], stem[index + 1 :]
        if (
            stem[index] == "."
            and model not in ("", ".", "..")
            and run_id not in ("", ".", "..")
            and (runs / run_id / model).is_dir()
        ):
            return stem[:index], stem[index + 1 :]
    raise ImportProblem(f"{summary_path}: no logs/run_evaluation/<run_id>/<model>/ folder matches its name")


def _dataset(run_json: Path) -> str:
    try:
        data = _read_json(run_json)
    except FileNotFoundError:
        return "swebench"
    except ValueError:
        raise ImportProblem(f"{run_json}: not JSON") from None
    dataset = data.get("dataset") if isinstance(data, dict) else None
    return dataset if isinstance(dataset, str) and dataset else "swebench"


def _report(logs: Path, iid: str) -> dict | None:
    path = logs / iid / "report.json"
    _inside(logs, path)
    try:
        data = _read_json(path)
    except FileNotFoundError:
        return None
    except ValueError:
        return None  # the harness counts an unreadable report as an error instance too
    entry = data.get(iid) if isinstance(data, dict) else None
    return entry if isinstance(entry, dict) else None  # an entry that is no object says nothing


def _check_against_logs(path: Path, summary: dict, logs: Path) -> None:
    errors = set(summary["error_ids"])
    for iid in summary["resolved_ids"]:
        report = _report(logs, iid)
        if report is None or report.get("resolved") is not True:
            raise ImportProblem(
                f"{path}: resolved_ids lists {iid} but {logs / iid / 'report.json'} does not say resolved"
            )
    for iid in summary["unresolved_ids"]:
        report = _report(logs, iid)
        if report is None or report.get("resolved") is not False:
            raise ImportProblem(
                f"{path}: unresolved_ids lists {iid} but {logs / iid / 'report.json'} does not say unresolved"
            )
    for iid in errors:
        if _report(logs, iid) is not None and iid not in summary["completed_ids"]:
            raise ImportProblem(f"{path}: error_ids lists {iid} but it has a readable report.json")
    for iid in summary["submitted_ids"]:
        if iid not in summary.get("empty_patch_ids", []) and not (logs / iid).is_dir():
            raise ImportProblem(f"{path}: {iid} was submitted but {logs / iid} is missing")


def _trial(root: Path, logs: Path, summary: dict, iid: str, dataset: str, model: str, grader: str) -> ImportedTrial:
    reasons = summary.get("failure_reasons", {})
    environment = set(summary.get("infra_failure_ids", []))
    folder = logs / iid
    _inside(logs, folder)
    files = (
        [p.relative_to(root).as_posix() for p in sorted(folder.rglob("*")) if p.is_file()] if folder.is_dir() else []
    )
    pin = f"swebench:{dataset}:{iid}"
    if iid in environment or iid in summary["error_ids"]:
        why = reasons.get(iid) or ("the harness could not grade it" if iid in summary["error_ids"] else "environment")
        return ImportedTrial(
            dataset,
            model,
            model,
            iid,
            INFRA_FAILED,
            None,
            error=f"swebench: {why}",
            task_pin=pin,
            verifier_pin=grader,
            files=files,
            task_path=iid,
        )
    resolved = 1 if iid in summary["resolved_ids"] else 0
    return ImportedTrial(
        dataset,
        model,
        model,
        iid,
        COMPLETED,
        {"resolved": resolved},
        task_pin=pin,
        verifier_pin=grader,
        files=files,
        # With --tasks naming the tasks HEMRA made of the same instances (hemra datasets pin
        # swebench:...), the instance pairs with HEMRA's runs of its task (record._task_of).
        task_path=iid,
    )
