"""SWE-bench instances as Harbor-format tasks: `swebench:FILE` (JSON, JSON lines or parquet rows)
or `swebench:ORG/NAME@REVISION` (a Hugging Face dataset at a commit, its `test` split).

Rows are SWE-bench 5 rows: besides the classic fields they carry the instance's evaluation
image, eval script, log parser and evaluation type. Each becomes a task folder:

    environment/Dockerfile   FROM <image>, WORKDIR /testbed
    task.toml                [environment] base_commit: HEMRA strips /testbed's history to it
    instruction.md           the problem statement
    solution/solve.sh        applies solution/gold.patch as SWE-bench applies a prediction
    tests/eval.sh            the row's eval script, recording the test command's exit status
    tests/test.sh            keeps the agent's diff, runs eval.sh into test_output.txt
    tests/swebench.json      what grading needs: HEMRA's scorer grades the log with the
                             swebench package's own grading (services/scorer/swebench.py)

The tasks are written under HEMRA_HOME/cache/swebench/<digest of the rows>/ and pinned by
HEMRA's digest like any folder.
"""

import hashlib
import json
import re
from pathlib import Path

from hemra.services.common import parsing
from hemra.services.common import swebench as package
from hemra.services.domain.planerrors import NotFound, PlanError
from hemra.services.planner import hf, pinned
from hemra.services.planner.pinned import SOURCE_FILE

PREFIX = "swebench:"
#: The fields a row must have (SWE-bench 5; earlier rows have no image or eval script).
FIELDS = (
    "instance_id",
    "repo",
    "version",
    "base_commit",
    "patch",
    "test_patch",
    "problem_statement",
    "FAIL_TO_PASS",
    "PASS_TO_PASS",
    "image",
    "eval_script",
    "log_parser",
    "eval_type",
)
#: The largest instance file read (SWE-bench's full test split is tens of megabytes).
MAX_FILE_BYTES = 2 * 1024 * 1024 * 1024
#: The split read from a Hugging Face dataset (its files whose names start with it).
SPLIT = "test"
#: Changes when the tasks made from the same rows change (a new folder, a new digest).
#: 2: task.toml names the row's base_commit, the commit HEMRA strips /testbed's history to.
LAYOUT = "2"
SPEC_FILE = "swebench.json"
_SUFFIXES = (".json", ".jsonl", ".parquet")
_INSTANCE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}__[A-Za-z0-9][A-Za-z0-9_.-]{0,155}$")
#: An image reference as Docker writes one (it goes on the Dockerfile's FROM line: no spaces, no lines).
_IMAGE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/:@+-]{0,254}$")

TEST_SH = """#!/bin/bash
# The agent's changes as a patch (for the record), then SWE-bench's eval script; HEMRA's scorer
# grades test_output.txt with the swebench package's grading (tests/swebench.json).
cd /testbed
git -c core.fileMode=false diff --no-color {base_commit} > /logs/verifier/model.patch 2>/dev/null
/bin/bash /tests/eval.sh > /logs/verifier/test_output.txt 2>&1
"""

SOLVE_SH = """#!/bin/bash
# The gold patch, applied the way the SWE-bench harness applies a prediction.
cd /testbed
patch_file="$(dirname "$0")/gold.patch"
git apply --verbose "$patch_file" \\
  || git apply --verbose --reject "$patch_file" \\
  || patch --batch --fuzz=5 -p1 -i "$patch_file"
"""


def is_file_ref(name: str) -> bool:
    return name.endswith(_SUFFIXES)


def resolve(source: str, revision: str, home: Path, base: Path | None = None) -> Path:
    """The folder of tasks made from the instances `source` names (a file, or a hub dataset
    at `revision`)."""
    if is_file_ref(source):
        path = Path(source).expanduser()
        path = path if path.is_absolute() or base is None else base / path
        if not path.is_file():
            raise NotFound(f"dataset {PREFIX}{source}: no such file {path}")
        files, origin = [path], {"file": str(path.resolve())}
    else:
        if not revision:
            raise PlanError(f"dataset {PREFIX}{source}: give a revision ({PREFIX}{source}@<commit or branch>)")
        snapshot = hf.snapshot(source, revision, PREFIX)
        files = _split_files(source, snapshot)
        origin = {"repo": source, "revision": snapshot.name, "split": SPLIT}
    hashes = {path: hashlib.sha256(_read(source, path)).hexdigest() for path in files}
    digest = _digest(hashes.values())
    folder = home / "cache" / "swebench" / digest[:16]
    if (folder / SOURCE_FILE).is_file():
        return folder
    rows = [row for path in files for row in hf.rows(path)]
    origin["files"] = [{"path": path.name, "sha256": sha256} for path, sha256 in hashes.items()]
    return _write(source, origin, files, digest, rows, folder)


def _read(source: str, path: Path) -> bytes:
    """An instance file: a regular file (a hub snapshot's are links to its blobs, followed), never
    a FIFO or a device, of at most MAX_FILE_BYTES."""
    try:
        return parsing.read_regular(path, MAX_FILE_BYTES, follow_links=True)[0]
    except parsing.Unbounded as exc:
        raise PlanError(f"dataset {PREFIX}{source}: {exc}") from None
    except OSError as exc:
        raise PlanError(f"dataset {PREFIX}{source}: {path}: cannot be read: {exc.strerror or exc}") from None


def _split_files(repo: str, snapshot: Path) -> list[Path]:
    found = sorted(p for p in snapshot.rglob("*") if p.is_file() and p.suffix in _SUFFIXES and p.name.startswith(SPLIT))
    if not found:
        raise PlanError(f"dataset {PREFIX}{repo}: no {SPLIT} split (no file named {SPLIT}*.parquet, .jsonl or .json)")
    return found


def _digest(file_hashes) -> str:
    """The tasks' cache key: the layout HEMRA writes and the instance files' SHA-256s."""
    digest = hashlib.sha256(f"hemra swebench tasks {LAYOUT}\0".encode())
    for sha256 in file_hashes:
        digest.update(bytes.fromhex(sha256))
    return digest.hexdigest()


def _write(source: str, origin: dict, files: list[Path], digest: str, rows: list[dict], folder: Path) -> Path:
    if not rows:
        raise PlanError(f"dataset {PREFIX}{source}: its files hold no instances")
    try:
        parsers = package.module("log_parsers").PARSER_REGISTRY
        constants = package.module("constants")
    except package.Missing as exc:
        raise PlanError(f"dataset {PREFIX}{source}: {exc}") from None
    name = Path(source).stem if is_file_ref(source) else source.replace("/", "-")
    with pinned.writing(folder) as work:
        seen: set[str] = set()
        for number, row in enumerate(rows, 1):
            where = f"{files[0].name if len(files) == 1 else source}: instance {number}"
            _check(row, where, parsers)
            if row["instance_id"] in seen:
                raise PlanError(f"{where}: {row['instance_id']} appears twice")
            seen.add(row["instance_id"])
            _task(work / row["instance_id"], row, constants)
        pinned.describe(
            work,
            name,
            {
                "source": "swebench",
                "name": source,
                "version": origin.get("revision", digest[:12]),
                "registry": "huggingface" if "repo" in origin else "file",
                **origin,
                "swebench": package.version(),
                "tasks": [],
            },
        )
    return folder


def _check(row: dict, where: str, parsers: dict) -> None:
    if not isinstance(row, dict):
        raise PlanError(f"{where}: not an object of fields")
    missing = [field for field in FIELDS if field not in row or row[field] is None]
    if missing:
        raise PlanError(
            f"{where}: missing {', '.join(missing)} (HEMRA runs SWE-bench 5 rows, which carry "
            "image, eval_script, log_parser and eval_type)"
        )
    if not isinstance(row["instance_id"], str) or not _INSTANCE.match(row["instance_id"]):
        raise PlanError(f"{where}: instance_id {str(row['instance_id'])[:80]!r} is not <owner>__<repo>-<number>")
    where = f"{where} ({row['instance_id']})"
    if row["log_parser"] not in parsers:
        raise PlanError(f"{where}: log_parser {row['log_parser']!r} is not one swebench {package.version()} knows")
    if not isinstance(row["image"], str) or not _IMAGE.match(row["image"]):
        raise PlanError(f"{where}: image {str(row['image'])[:80]!r} is not an image reference")
    if row["eval_type"] not in ("pass_and_fail", "fail_only"):
        raise PlanError(f"{where}: eval_type {row['eval_type']!r} (expected pass_and_fail or fail_only)")
    for field in ("FAIL_TO_PASS", "PASS_TO_PASS"):
        tests = _tests(row[field])
        if tests is None:
            raise PlanError(f"{where}: {field} is not a list of test names (or one JSON-encoded)")
    if not re.fullmatch(r"[0-9a-f]{7,40}", str(row["base_commit"])):
        raise PlanError(f"{where}: base_commit {str(row['base_commit'])[:60]!r} is not a commit")


def _tests(value) -> list[str] | None:
    if isinstance(value, str):
        try:
            value = parsing.load_json(value, "a test list")
        except ValueError:  # not JSON, or too deep to be a list of names (parsing.Unbounded)
            return None
    if isinstance(value, list) and all(isinstance(x, str) for x in value):
        return value
    return None


def eval_script(script: str, constants) -> str:
    """The row's eval script as the SWE-bench harness runs it (`make_test_spec(...).eval_script`):
    the test command's exit status recorded after the end-of-output marker, so grading can tell
    a log that lies about its run (a patch printing its own PASSED lines) from one that does not."""
    lines = [line for line in script.strip().split("\n") if line not in ("#!/bin/bash", "set -uxo pipefail")]
    for index, line in enumerate(lines):
        if constants.END_TEST_OUTPUT in line:
            variable = constants.TEST_EXIT_CODE_VAR
            lines[index : index + 1] = [f"{variable}=$?", line, f'echo "{constants.TEST_EXIT_CODE}: ${variable}"']
            break
    return "\n".join(["#!/bin/bash", "set -uxo pipefail", *lines]) + "\n"


def _task(folder: Path, row: dict, constants) -> None:
    iid = row["instance_id"]
    for part in ("environment", "tests", "solution"):
        (folder / part).mkdir(parents=True)
    (folder / "task.toml").write_text(
        f'[task]\nname = "swebench/{iid}"\n\n[metadata]\nrepo = {json.dumps(row["repo"])}\n'
        f"version = {json.dumps(str(row['version']))}\nbase_commit = {json.dumps(row['base_commit'])}\n\n"
        '[agent]\ntimeout_sec = 3000.0\n\n[verifier]\ntimeout_sec = 1800.0\n\n[environment]\nworkdir = "/testbed"\n'
        f"base_commit = {json.dumps(row['base_commit'])}\n"
    )
    (folder / "environment" / "Dockerfile").write_text(f"FROM {row['image']}\nWORKDIR /testbed\n")
    (folder / "instruction.md").write_text(row["problem_statement"])
    _script(folder / "solution" / "solve.sh", SOLVE_SH)
    (folder / "solution" / "gold.patch").write_text(row["patch"])
    _script(folder / "tests" / "test.sh", TEST_SH.format(base_commit=row["base_commit"]))
    _script(folder / "tests" / "eval.sh", eval_script(row["eval_script"], constants))
    spec = {
        "instance_id": iid,
        "image": row["image"],
        "repo": row["repo"],
        "version": str(row["version"]),
        "FAIL_TO_PASS": _tests(row["FAIL_TO_PASS"]),
        "PASS_TO_PASS": _tests(row["PASS_TO_PASS"]),
        "log_parser": row["log_parser"],
        "eval_type": row["eval_type"],
        "swebench": package.version(),
    }
    (folder / "tests" / SPEC_FILE).write_text(json.dumps(spec, indent=2) + "\n")


def _script(path: Path, text: str) -> None:
    path.write_text(text)
    path.chmod(0o755)
