"""A hostile harness against HEMRA's own bookkeeping: its logs sabotaged in the sandbox, output
too long, too much or too big, strings that drive the terminal. Each attack runs through the
real `hemra run` on the host sandbox and on the Docker sandbox. Whatever the agent does in its
own sandbox is a result, never an infrastructure failure, and the store and HEMRA's memory
stay bounded. Caps are lowered through HEMRA_MAX_* variables so the cases stay small."""

import json
import resource
import subprocess
import textwrap
from pathlib import Path

import pytest

from tests.e2e.helpers import hemra, show

pytestmark = pytest.mark.slow


@pytest.fixture(params=["host", "docker"])
def sandbox(request):
    """Each test on the host sandbox, and on Docker when the engine answers (required in CI)."""
    if request.param == "docker":
        request.getfixturevalue("docker_engine")
    return request.param


TEST_SH = """#!/bin/bash
mkdir -p /logs/verifier
if [ "$(cat /app/answer.txt 2>/dev/null)" = 42 ]; then echo 1; else echo 0; fi > /logs/verifier/reward.txt
"""


def make_tasks(root: Path, names=("answer",)) -> Path:
    for name in names:
        task = root / "ds" / name
        (task / "environment").mkdir(parents=True)
        (task / "tests").mkdir()
        (task / "task.toml").write_text(
            f'[task]\nname = "out/{name}"\n[agent]\ntimeout_sec = 60.0\n[verifier]\ntimeout_sec = 30.0\n'
        )
        (task / "instruction.md").write_text("Write 42 into /app/answer.txt.\n")
        (task / "environment" / "Dockerfile").write_text("FROM debian:bookworm-slim\nWORKDIR /app\n")
        (task / "tests" / "test.sh").write_text(TEST_SH)
    return root / "ds"


def run_attack(
    env: dict,
    tmp_path: Path,
    script: str,
    sandbox: str,
    tasks=("answer",),
    extra_env: dict | None = None,
    isolation: str = "",
) -> subprocess.CompletedProcess:
    """Run bash `script` as a program harness (it reaches into the sandbox with `hemra harness
    exec`) on each task once."""
    (tmp_path / "harnesses").mkdir(exist_ok=True)
    (tmp_path / "harnesses" / "attack.toml").write_text('kind = "program"\ncommand = ["bash", "attack.sh"]\n')
    (tmp_path / "harnesses" / "attack.sh").write_text(textwrap.dedent(script))
    dataset = make_tasks(tmp_path, tasks)
    run_file = tmp_path / "run.toml"
    run_file.write_text(
        f'name = "attack"\nharnesses = ["attack"]\ndatasets = ["{dataset}"]\n'
        f'[sandbox]\nkind = "{sandbox}"\n' + (f'[verifier]\nisolation = "{isolation}"\n' if isolation else "")
    )
    result = hemra({**env, **(extra_env or {})}, "run", str(run_file), cwd=tmp_path, timeout=600)
    assert result.returncode in (0, 1), result.stderr + result.stdout
    return result


def attempts(env: dict) -> list[dict]:
    return show(env, "attack")["attempts"]


def events_of(env: dict, attempt: dict) -> list[dict]:
    return show(env, attempt["id"], "--events")["events"]


def blob(env: dict, attempt: dict, path: str) -> bytes:
    [artifact] = [a for a in attempt["artifacts"] if a["path"] == path]
    digest = artifact["blob_digest"]
    return (Path(env["HEMRA_HOME"]) / "blobs" / "sha256" / digest[7:9] / digest[9:]).read_bytes()


def folder_size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


# -- A: HEMRA's own files ---------------------------------------------------------------------------

SABOTAGE = """
hemra harness exec 'mkdir -p /logs/agent/harness-stdout.txt /logs/agent/harness-stderr.txt; echo 41 > /app/answer.txt'
echo "the harness's own output"
echo "and its errors" >&2
"""


def test_sabotaged_log_paths_are_a_result_not_an_infrastructure_failure(hemra_env, tmp_path, sandbox):
    # Two tasks the agent fails, both sabotaged: infrastructure failures would leave the
    # pass rate's denominator (0/0 instead of 0/2).
    result = run_attack(hemra_env, tmp_path, SABOTAGE, sandbox, tasks=("one", "two"))
    found = attempts(hemra_env)
    assert len(found) == 2
    for attempt in found:
        assert attempt["outcome"] == "OUTCOME_COMPLETED", attempt
        assert attempt["score"]["rewards"]["reward"] == 0.0
        assert blob(hemra_env, attempt, "/logs/agent/harness-stdout.txt") == b"the harness's own output\n"
        assert blob(hemra_env, attempt, "/logs/agent/harness-stderr.txt") == b"and its errors\n"
    [row] = show(hemra_env, "attack")["report"]["datasets"][0]["rows"]
    assert (row["passed"] if "passed" in row else 0, row["binary_graded"]) == (0, 2)
    assert row.get("infra_failed", 0) == 0
    assert "0/2 (0.0%)" in result.stdout


# -- B: output the agent controls --------------------------------------------------------------------

LONG_LINE = """
python3 -c "print('x' * 200000)"
echo '{"type": "message", "name": "after", "text": "still parsed"}'
hemra harness exec 'echo 42 > /app/answer.txt'
"""


def test_a_200_kb_line_is_split_into_output_not_refused(hemra_env, tmp_path, sandbox):
    run_attack(hemra_env, tmp_path, LONG_LINE, sandbox)
    [attempt] = attempts(hemra_env)
    assert attempt["outcome"] == "OUTCOME_COMPLETED", attempt
    assert attempt["score"]["rewards"]["reward"] == 1.0
    events = events_of(hemra_env, attempt)
    stdout = "".join(e["payload"]["text"] for e in events if e["type"] == "output" and e["name"] == "stdout")
    assert stdout.count("x") == 200000
    assert [e["payload"]["text"] for e in events if e["name"] == "after"] == ["still parsed"]


FLOOD = """
hemra harness exec 'echo 42 > /app/answer.txt'
yes 'all work and no play makes jack a dull boy' | head -c 30000000
echo '{"type": "message", "name": "late", "text": "past the cap"}'
echo done >&2
"""


def test_an_output_flood_keeps_the_store_bounded_and_the_attempt_readable(hemra_env, tmp_path, sandbox):
    caps = {"HEMRA_MAX_EVENT_BYTES": "1000000", "HEMRA_MAX_OWN_LOG_BYTES": "2000000"}
    run_attack(hemra_env, tmp_path, FLOOD, sandbox, extra_env=caps)
    [attempt] = attempts(hemra_env)
    assert attempt["outcome"] == "OUTCOME_COMPLETED", attempt
    assert attempt["score"]["rewards"]["reward"] == 1.0
    events = events_of(hemra_env, attempt)
    kept = sum(len(json.dumps(e["payload"], ensure_ascii=False).encode()) for e in events)
    assert kept < 1_500_000
    [truncated] = [e for e in events if e["name"] == "events_truncated"]
    [dropped] = [e["payload"] for e in events if e["name"] == "events_dropped"]
    assert dropped["dropped_bytes"] > 28_000_000 and dropped["max_bytes"] == 1_000_000
    assert not [e for e in events if e["name"] == "late"]
    # HEMRA's own events after the flood are all there.
    names = {e["name"] for e in events}
    assert {"harness_end", "scored"} <= names
    stdout = blob(hemra_env, attempt, "/logs/agent/harness-stdout.txt")
    assert len(stdout) == 2_000_000 and stdout.startswith(b"all work")
    [artifact] = [a for a in attempt["artifacts"] if a["path"] == "/logs/agent/harness-stdout.txt"]
    assert int(artifact["size_bytes"]) > 30_000_000  # the whole size, though 2 MB were kept
    assert folder_size(Path(hemra_env["HEMRA_HOME"])) < 20_000_000
    export = hemra(hemra_env, "export", attempt["id"], "--out", str(tmp_path / "export"))
    assert export.returncode == 0, export.stderr


ARTIFACTS = """
hemra harness exec 'for i in 1 2 3 4 5; do head -c 3000000 /dev/zero | tr "\\0" "$i" > /logs/artifacts/big$i; done; echo 42 > /app/answer.txt'
"""


def test_big_artifacts_are_cut_and_marked_within_the_caps(hemra_env, tmp_path, sandbox):
    caps = {"HEMRA_MAX_ARTIFACT_BYTES": "1000000", "HEMRA_MAX_ARTIFACTS_BYTES": "3500000"}
    run_attack(hemra_env, tmp_path, ARTIFACTS, sandbox, extra_env=caps)
    [attempt] = attempts(hemra_env)
    assert attempt["outcome"] == "OUTCOME_COMPLETED", attempt
    assert attempt["score"]["rewards"]["reward"] == 1.0
    paths = {a["path"]: a for a in attempt["artifacts"]}
    assert "/logs/verifier/reward.txt" in paths  # the verifier's files are kept first
    kept = [p for p in paths if p.startswith("/logs/artifacts/big")]
    assert len(kept) == 4  # 1 MB each, the last one 0.5 MB: then the attempt's 3.5 MB are spent
    sizes = [len(blob(hemra_env, attempt, path)) for path in kept]
    assert max(sizes) == 1_000_000 and 3_000_000 < sum(sizes) <= 3_500_000
    assert {int(paths[path]["size_bytes"]) for path in kept} == {3_000_000}  # the whole size
    events = events_of(hemra_env, attempt)
    truncated = {e["payload"]["path"] for e in events if e["name"] == "artifact_truncated"}
    dropped = {e["payload"]["path"] for e in events if e["name"] == "artifact_dropped"}
    assert {f"/logs/artifacts/big{i}" for i in range(1, 6)} <= truncated | dropped
    assert len(dropped) == 1 and not dropped & set(kept)
    [summary] = [e["payload"] for e in events if e["name"] == "artifacts_capped"]
    assert summary["max_file_bytes"] == 1_000_000


def test_a_2_gib_artifact_is_read_no_further_than_its_cap(hemra_env, tmp_path):
    """The default caps, a sparse 2 GiB file: HEMRA keeps 64 MiB of it and its memory stays far
    below the file's size. (A shared verifier: a fresh one would copy the 2 GiB first.)"""
    script = """
    hemra harness exec 'truncate -s 2G /logs/artifacts/huge; echo 42 > /app/answer.txt'
    """
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    run_attack(hemra_env, tmp_path, script, "host", isolation="shared")
    peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    [attempt] = attempts(hemra_env)
    assert attempt["outcome"] == "OUTCOME_COMPLETED", attempt
    [artifact] = [a for a in attempt["artifacts"] if a["path"] == "/logs/artifacts/huge"]
    assert int(artifact["size_bytes"]) == 2 * 1024**3
    assert len(blob(hemra_env, attempt, "/logs/artifacts/huge")) == 64 * 1024 * 1024
    if peak_kib > before:  # ru_maxrss is the largest child so far: only a new peak is this run's
        assert peak_kib < 1024 * 1024, f"hemra run peaked at {peak_kib // 1024} MiB"


# -- C: strings that drive the terminal --------------------------------------------------------------

ESCAPES = """
hemra harness exec 'echo 41 > /app/answer.txt'
python3 - <<'END'
import asyncio
from hemra.clients.harness_sdk import HarnessSession

async def main():
    async with HarnessSession.from_env() as session:
        await session.finish(agent_version="1.0\\x1b[2J\\x1b[31m\\u202eevil\\x9b31m", message="x")

asyncio.run(main())
END
"""


def test_agent_strings_reach_the_terminal_escaped(hemra_env, tmp_path):
    result = run_attack(hemra_env, tmp_path, ESCAPES, "host")
    [attempt] = attempts(hemra_env)
    assert attempt["agent_version"].startswith("1.0\x1b[2J")  # kept exactly in the store
    # The report flags the unpinned version it saw: escaped, visibly.
    assert "ran 1.0\\x1b[2J\\x1b[31m\\u202eevil\\x9b31m" in result.stdout
    outputs = [result.stdout, result.stderr]
    for args in (
        ("show", "attack", "--report"),
        ("runs",),
        ("runs", "--json"),
        ("show", attempt["id"]),
        ("show", "attack"),
        ("compare", "attack"),
        ("compare", "attack", "--json"),
    ):
        done = hemra(hemra_env, *args)
        assert done.returncode == 0, done.stderr
        outputs += [done.stdout, done.stderr]
    for output in outputs:
        assert "\x1b" not in output and "\x9b" not in output and "\u202e" not in output, output
    shown = json.loads(hemra(hemra_env, "show", attempt["id"]).stdout)
    assert shown["attempt"]["agent_version"] == attempt["agent_version"]  # --json stays exact
