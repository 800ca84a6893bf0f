"""Bad task folders, numbers and listeners (issue 12): one line naming the problem (the file, key
or line), exit 2, and the store unchanged, on both databases."""

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.helpers import copy_task, hemra

pytestmark = pytest.mark.slow


def _task(tmp: Path, mutate) -> str:
    task = copy_task("text-stats", tmp / "ds")
    mutate(task)
    return str(tmp / "ds")


def _toml(text: str):
    def mutate(task: Path) -> None:
        toml = task / "task.toml"
        toml.write_text(toml.read_text() + "\n" + text + "\n")

    return mutate


def _toml_key(table: str, line: str):
    """Set a key of a table already in task.toml (or add the table)."""

    def mutate(task: Path) -> None:
        toml = task / "task.toml"
        lines = [ln for ln in toml.read_text().splitlines() if not ln.startswith(line.split("=")[0].strip() + " ")]
        if f"[{table}]" in lines:
            lines.insert(lines.index(f"[{table}]") + 1, line)
        else:
            lines += [f"[{table}]", line]
        toml.write_text("\n".join(lines) + "\n")

    return mutate


def _link(name: str, target: str):
    return lambda task: os.symlink(target, task / "tests" / name)


def _non_utf8(task: Path) -> None:
    with open(os.path.join(os.fsencode(task / "tests"), b"bad\xff.txt"), "wb") as handle:
        handle.write(b"x")


def _big(task: Path) -> None:
    with open(task / "environment" / "big.bin", "wb") as handle:
        handle.truncate(1024**3)  # 1 GB, sparse: refused by its size, never read


def _workdir(path: str):
    def mutate(task: Path) -> None:
        dockerfile = task / "environment" / "Dockerfile"
        dockerfile.write_text(dockerfile.read_text().replace("WORKDIR /app", f"WORKDIR {path}"))

    return mutate


def _run(mutate) -> callable:
    return lambda tmp: ["run", "-H", "oracle", "-d", _task(tmp, mutate)]


TASK_CASES = {
    "timeout nan": (_run(_toml_key("agent", "timeout_sec = nan")), ["task.toml", "[agent] timeout_sec", "nan"]),
    "timeout inf": (_run(_toml_key("agent", "timeout_sec = inf")), ["task.toml", "[agent] timeout_sec", "inf"]),
    "timeout 1e308": (_run(_toml_key("agent", "timeout_sec = 1e308")), ["task.toml", "[agent] timeout_sec", "1e+308"]),
    "verifier timeout 1e12": (
        _run(_toml_key("verifier", "timeout_sec = 1e12")),
        ["task.toml", "[verifier] timeout_sec", "at most 604,800"],
    ),
    "environment env a string": (_run(_toml_key("environment", 'env = "abc"')), ["task.toml", "[environment].env"]),
    "environment cpus a string": (_run(_toml_key("environment", 'cpus = "two"')), ["task.toml", "[environment] cpus"]),
    "environment memory_mb huge": (
        _run(_toml_key("environment", "memory_mb = 99999999999999999")),
        ["task.toml", "[environment] memory_mb"],
    ),
    "environment workdir a number": (
        _run(_toml_key("environment", "workdir = 5")),
        ["task.toml", "[environment] workdir must be a string"],
    ),
    "symlink loop": (_run(_link("loop", "loop")), ["tests/loop", "symbolic link loop"]),
    "dangling symlink": (_run(_link("gone", "nowhere.txt")), ["tests/gone", "does not exist"]),
    "directory symlink": (_run(_link("env", "../environment")), ["tests/env", "a symbolic link to a folder"]),
    "file name not UTF-8": (_run(_non_utf8), ["tests/bad\ufffd.txt", "not UTF-8"]),
    "1 GB file": (_run(_big), ["environment/big.bin", "1,073,741,824 bytes", "at most 200 MiB"]),
    "WORKDIR /usr on the host": (
        _run(_workdir("/usr")),
        ["environment/Dockerfile", "line 3: WORKDIR /usr", "host system folder"],
    ),
    "WORKDIR /usr/local/src on the host": (
        _run(_workdir("/usr/local/src")),
        ["environment/Dockerfile", "line 3: WORKDIR /usr/local/src"],
    ),
}

NUMBER_CASES = {
    "runs --limit huge": (
        lambda tmp: ["runs", "--limit", "99999999999999999999"],
        ["--limit must be from 1 to 100,000"],
    ),
    "runs --limit 0": (lambda tmp: ["runs", "--limit", "0"], ["--limit must be from 1 to 100,000 (got 0)"]),
    "-k huge": (
        lambda tmp: ["run", "-H", "oracle", "-d", "hemra-offline", "-k", "99999999999999999999"],
        ["--attempts must be at most 1,000"],
    ),
    "--concurrency huge": (
        lambda tmp: ["run", "-H", "oracle", "-d", "hemra-offline", "--concurrency", str(2**31)],
        ["--concurrency must be at most 1,000"],
    ),
    "--timeout huge": (
        lambda tmp: ["run", "-H", "oracle", "-d", "hemra-offline", "--timeout", str(2**63)],
        ["--timeout must be at most 604,800"],
    ),
    "--max-infra-retries huge": (
        lambda tmp: ["run", "-H", "oracle", "-d", "hemra-offline", "--max-infra-retries", "99999999999999999999"],
        ["--max-infra-retries must be at most 100"],
    ),
    "run file attempts huge": (
        lambda tmp: ["run", _run_file(tmp, "attempts = 9223372036854775807\n")],
        ["run.toml: attempts must be at most 1,000"],
    ),
    "worker --concurrency huge": (
        lambda tmp: ["worker", "--store", "127.0.0.1:1", "--concurrency", "99999999999"],
        ["--concurrency must be from 1 to 1,000"],
    ),
    "serve --concurrency huge": (
        lambda tmp: ["serve", "--concurrency", "99999999999"],
        ["--concurrency must be from 0 to 1,000"],
    ),
}


def _run_file(tmp: Path, text: str) -> str:
    (tmp / "run.toml").write_text('harnesses = ["oracle"]\ndatasets = ["hemra-offline"]\n' + text)
    return str(tmp / "run.toml")


def _store_state(env: dict, tmp: Path) -> tuple:
    """Every stored byte (the SQLite file and the blobs under HEMRA_HOME) and what `hemra runs` lists."""
    files = {}
    for root in (Path(env["HEMRA_HOME"]), tmp / "db"):
        for path in sorted(root.rglob("*")) if root.exists() else []:
            if path.is_file():
                files[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
    listed = hemra(env, "runs", "--json")
    assert listed.returncode == 0, listed.stderr
    return files, json.loads(listed.stdout)


@pytest.fixture
def store_env(hemra_env, database_url, tmp_path):
    """hemra_env on the SQLite file or PostgreSQL database of `database_url`, with one run recorded."""
    if database_url.startswith("sqlite"):
        (tmp_path / "db").mkdir()
        database_url = f"sqlite:///{tmp_path / 'db' / 'hemra.db'}"
    env = dict(hemra_env, HEMRA_DATABASE_URL=database_url)
    recorded = hemra(
        env, "run", "-H", "oracle", "-d", "hemra-offline", "-t", "hemra/text-stats", "--detach", cwd=tmp_path
    )
    assert recorded.returncode == 0, recorded.stderr
    return env


@pytest.mark.parametrize("case", [*TASK_CASES, *NUMBER_CASES])
def test_bad_input__one_line_exit_2_store_unchanged(case, store_env, tmp_path):
    make_args, expected = {**TASK_CASES, **NUMBER_CASES}[case]
    args = make_args(tmp_path)
    before = _store_state(store_env, tmp_path)
    result = hemra(store_env, *args, cwd=tmp_path, timeout=120)
    assert result.returncode == 2, result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    for fragment in expected:
        assert fragment in lines[0], lines[0]
    assert _store_state(store_env, tmp_path) == before


def test_host_workdir_elsewhere__runs(hemra_env, tmp_path):
    """/srv is no host system folder: the task runs (the refusal is no wider than the failure)."""
    result = hemra(hemra_env, "run", "-H", "oracle", "-d", _task(tmp_path, _workdir("/srv")), cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("module", ["hemra.services.planner", "hemra.services.scorer", "hemra.services.executor"])
def test_service_module_listen_on_every_interface__needs_expose(module, hemra_env):
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            module,
            "--listen",
            "0.0.0.0:0",
            "--store",
            "127.0.0.1:1",
            *(["--scorer", "127.0.0.1:1"] if module == "hemra.services.executor" else []),
        ],
        env=dict(hemra_env, HEMRA_TOKEN="t" * 32),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.strip() == "error: --listen 0.0.0.0:0 is not a loopback address; add --expose to allow it"


def test_service_module_with_expose__listens(hemra_env):
    process = subprocess.Popen(
        [sys.executable, "-m", "hemra.services.scorer", "--listen", "0.0.0.0:0", "--expose", "--store", "127.0.0.1:1"],
        env=dict(hemra_env, HEMRA_TOKEN="t" * 32),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = process.stdout.readline()
        assert line.startswith("scorer listening on 0.0.0.0:"), line + process.stderr.read()
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_swebench_report_listing_ids_never_submitted__warns(hemra_env, tmp_path):
    from tests.importer.swebench_fixture import write_run

    folder = write_run(tmp_path / "run")
    summary = next(folder.glob("*.json"))
    data = json.loads(summary.read_text())
    data["resolved_ids"].append("ghost__ghost-1")  # graded resolved, with its report, but never submitted
    data["error_ids"] += ["ghost__ghost-2", "ghost__ghost-3"]
    summary.write_text(json.dumps(data))
    logs = next((folder / "logs" / "run_evaluation").glob("*/*/a__a-1")).parent / "ghost__ghost-1"
    logs.mkdir()
    (logs / "report.json").write_text(json.dumps({"ghost__ghost-1": {"resolved": True}}))
    result = hemra(hemra_env, "import", str(folder), "--swebench-version", "5.0.2")
    assert result.returncode == 0, result.stdout + result.stderr
    assert (
        f"warning: {summary.name}: resolved_ids lists 1 instance ID never submitted (ghost__ghost-1); "
        "not imported" in result.stdout
    )
    assert "error_ids lists 2 instance IDs never submitted (ghost__ghost-2, ghost__ghost-3)" in result.stdout
    assert "6 trials" in result.stdout


def test_swebench_report_as_the_harness_writes_it__no_warning(hemra_env, tmp_path):
    from tests.importer.swebench_fixture import write_run

    result = hemra(hemra_env, "import", str(write_run(tmp_path / "run")), "--swebench-version", "5.0.2")
    assert result.returncode == 0 and "warning" not in result.stdout + result.stderr, result.stdout + result.stderr
