"""Repository history in task environments, with Docker, offline: a repository whose future
commit holds the fix (a base commit with the bug; after it the fix, with a tag, a branch, a
remote-tracking ref and a reflog entry at it, and a stash), made into a SWE-bench task (its
evaluation image holds the repository at /testbed) and a plain task (its Dockerfile unpacks the
repository, .git and all, into /app). A harness that reads `git log --all -p`, finds the fix
and applies it resolves both when the run keeps their history (the leak is real), and neither
in the environment HEMRA builds, where `git log --all` shows the base commit alone."""

import json
import subprocess
import tarfile
from pathlib import Path

import pytest

from hemra.services.environments import history
from tests.e2e.helpers import hemra, runs, show
from tests.e2e.test_swebench_tasks import BASE, CALC, eval_script, git, instance, make_repo

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("docker_engine")]

IID = "acme__calc-7"
TASK = "hemra/leaky-calc"
#: The program harness: what an agent with a shell could do.
LEAK_SH = r"""hemra harness exec '
cd /testbed 2>/dev/null || cd /app
git config --global --add safe.directory "*"
git log --all --format=%H > /logs/agent/all-commits.txt
git log --all -p > /logs/agent/all-history.txt
fix=$(git log --all --format=%H -S"return a + b" -- calc | head -n 1)
if [ -n "$fix" ]; then git show "$fix" -- calc | git apply; fi
true'
"""
PLAIN_TEST = """#!/bin/bash
mkdir -p /logs/verifier
if grep -q "return a + b" /app/calc/__init__.py; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
"""


def add_future(repo: Path, base: str) -> str:
    """The fix as a commit after the base, reachable every way but from HEAD; HEAD back at base."""
    (repo / "calc" / "__init__.py").write_text(CALC.replace("a - b", "a + b"))
    git(repo, "commit", "-q", "-am", "Fix add")
    fix = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "tag", "v1.1")
    git(repo, "branch", "future")
    git(repo, "update-ref", "refs/remotes/origin/main", fix)
    git(repo, "config", "remote.origin.url", "https://example.invalid/acme/calc.git")
    git(repo, "reset", "-q", "--hard", base)  # the reflog and ORIG_HEAD keep the fix
    (repo / "NOTES").write_text("scratch\n")
    git(repo, "stash", "-q", "-u")
    assert git(repo, "rev-parse", "HEAD").strip() == base
    return fix


@pytest.fixture(scope="module")
def leaky(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("leaky")
    repo, base, gold, test_patch = make_repo(root)
    fix = add_future(repo, base)
    # The SWE-bench task: its evaluation image holds the repository (with .git) at /testbed.
    image = f"hemra-test/sweb.eval.x86_64.acme_1776_calc-7:{base[:12]}"
    (root / "Dockerfile").write_text(f"FROM {BASE}\nCOPY calc /testbed\nWORKDIR /testbed\n")
    subprocess.run(["docker", "build", "--network", "none", "-q", "-t", image, str(root)], check=True, timeout=300)
    rows = root / "instances.jsonl"
    # The tests run with /testbed on Python's path: the verifier sets PYTHONSAFEPATH.
    script = eval_script(base, test_patch).replace("python3 -m unittest", "PYTHONPATH=/testbed python3 -m unittest")
    rows.write_text(json.dumps(instance(IID, base, gold, test_patch, image, script)) + "\n")
    # The plain task: its Dockerfile unpacks the repository, .git and all, into its workdir.
    task = root / "tasks" / "leaky-calc"
    (task / "environment").mkdir(parents=True)
    (task / "tests").mkdir()
    (task / "task.toml").write_text(f'[task]\nname = "{TASK}"\n\n[environment]\nworkdir = "/app"\n')
    (task / "instruction.md").write_text("add(a, b) in /app/calc subtracts; make it add.\n")
    (task / "tests" / "test.sh").write_text(PLAIN_TEST)
    (task / "tests" / "test.sh").chmod(0o755)
    with tarfile.open(task / "environment" / "calc.tar", "w") as tar:
        tar.add(repo, arcname=".")
    (task / "environment" / "Dockerfile").write_text(f"FROM {BASE}\nADD calc.tar /app/\nWORKDIR /app\n")
    harnesses = root / "harnesses"
    harnesses.mkdir()
    (harnesses / "leak.toml").write_text('kind = "program"\ncommand = ["bash", "leak.sh"]\n')
    (harnesses / "leak.sh").write_text(LEAK_SH)
    return {"root": root, "rows": rows, "tasks": root / "tasks", "base": base, "fix": fix, "image": image}


def blob(env: dict, digest: str) -> bytes:
    return (Path(env["HEMRA_HOME"]) / "blobs" / "sha256" / digest[7:9] / digest[9:]).read_bytes()


def artifact(env: dict, attempt: dict, path: str) -> bytes:
    [found] = [a for a in attempt["artifacts"] if a["path"] == path]
    return blob(env, found["blob_digest"])


def leak_run(env: dict, leaky: dict, dataset: str, label: str, *flags: str) -> tuple[dict, dict]:
    result = hemra(
        env, "run", "-H", "leak", "-d", dataset, "--sandbox", "docker", "--label", label,
        "--max-infra-retries", "0", *flags, cwd=leaky["root"], timeout=600,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr + result.stdout
    run = show(env, label)
    [attempt] = run["attempts"]
    assert attempt["outcome"] == "OUTCOME_COMPLETED", attempt
    return run, attempt


@pytest.mark.parametrize("kind", ["swebench", "git"])
def test_the_future_leaks_only_where_the_run_keeps_the_history(hemra_env, leaky, kind):
    dataset, name = (
        (f"swebench:{leaky['rows']}", f"swebench/{IID}") if kind == "swebench" else (str(leaky["tasks"]), TASK)
    )
    reward = "resolved" if kind == "swebench" else "reward"

    # Kept (the run opts in): the harness finds the fix in the future and applies it.
    kept, attempt = leak_run(hemra_env, leaky, dataset, "kept", "--allow-history", name)
    assert attempt["score"]["rewards"] == {reward: 1.0}, attempt
    assert leaky["fix"] in artifact(hemra_env, attempt, "/logs/agent/all-commits.txt").decode()
    assert kept["run"]["spec"]["allow_history"] == [name] and kept["run"]["spec"]["history_kept"] == [name]
    [row] = kept["report"]["datasets"][0]["rows"]
    assert "history kept on 1 tasks: the agent could read the repository's future" in row["flags"], row["flags"]

    # HEMRA's environment: the same harness finds nothing but the base commit.
    stripped, attempt = leak_run(hemra_env, leaky, dataset, "stripped")
    assert attempt["score"]["rewards"] == {reward: 0.0}, attempt
    assert artifact(hemra_env, attempt, "/logs/agent/all-commits.txt").decode().split() == [leaky["base"]]
    assert b"return a + b" not in artifact(hemra_env, attempt, "/logs/agent/all-history.txt")
    spec = stripped["run"]["spec"]
    assert spec.get("history_kept", []) == [] and spec["history_layer"] == history.STRIPPED
    [row] = stripped["report"]["datasets"][0]["rows"]
    assert not any("history kept" in flag for flag in row["flags"]), row["flags"]

    # The image the attempt ran in says so, and is not the environment's own.
    from hemra.services.environments import engine

    tagged = [
        tag
        for image in engine.client().api.images(filters={"label": f"{history.LABEL}={history.STRIPPED}"})
        for tag in image["RepoTags"] or []
    ]
    assert any(tag.endswith(f"-h{history.KEY}") for tag in tagged), tagged


def test_the_oracle_still_resolves_the_stripped_swebench_task(hemra_env, leaky):
    result = hemra(
        hemra_env, "run", "-H", "oracle", "-d", f"swebench:{leaky['rows']}", "--sandbox", "docker",
        "--max-infra-retries", "0", timeout=600,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr + result.stdout
    [run] = runs(hemra_env)
    [attempt] = show(hemra_env, run["id"])["attempts"]
    assert attempt["score"]["rewards"] == {"resolved": 1.0}, attempt


def docker_sh(image: str, script: str, *args: str) -> subprocess.CompletedProcess:
    command = ["docker", "run", "--rm", "--network", "none", image, "sh", "-c", script, "test", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=300)


def test_the_strip_is_idempotent_and_its_check_finds_what_it_strips(leaky):
    state = (
        'cd /testbed && git config --global --add safe.directory "*" && git for-each-ref && git rev-parse HEAD '
        "&& git symbolic-ref HEAD && git cat-file --batch-all-objects --batch-check && git status --porcelain"
    )
    twice = docker_sh(
        leaky["image"],
        f'sh -c "$1" hemra-history /testbed "$2" && {state} && echo ---- && sh -c "$1" hemra-history /testbed "$2" '
        f'&& sh -c "$1" hemra-history --check /testbed "$2" && {state} && git log --all --format=%H',
        history.SCRIPT,
        leaky["base"],
    )
    assert twice.returncode == 0, twice.stderr
    first, second = twice.stdout.split("----\n")
    assert second.startswith(first) and second[len(first) :].split() == [leaky["base"]]
    assert f"{leaky['base']} commit\trefs/heads/main" in first and "refs/heads/main\n" in first
    # The check alone, on the environment as built, finds the future.
    unstripped = docker_sh(
        leaky["image"], 'sh -c "$1" hemra-history --check /testbed "$2"', history.SCRIPT, leaky["base"]
    )
    assert unstripped.returncode == 1 and "hemra-history: /testbed/.git:" in unstripped.stderr, unstripped.stderr


def test_a_repository_in_an_image_without_git_is_refused_by_name_unless_the_run_keeps_it(hemra_env, leaky, tmp_path):
    task = tmp_path / "ds" / "no-git"
    (task / "environment").mkdir(parents=True)
    (task / "tests").mkdir()
    (task / "task.toml").write_text('[task]\nname = "hemra/no-git"\n\n[environment]\nworkdir = "/app"\n')
    (task / "instruction.md").write_text("Nothing to do.\n")
    (task / "tests" / "test.sh").write_text("#!/bin/bash\necho 0 > /logs/verifier/reward.txt\n")
    (task / "environment" / "calc.tar").write_bytes(
        (leaky["tasks"] / "leaky-calc" / "environment" / "calc.tar").read_bytes()
    )
    (task / "environment" / "Dockerfile").write_text("FROM debian:bookworm-slim\nADD calc.tar /app/\nWORKDIR /app\n")
    refused = hemra(hemra_env, "run", "-H", "nop", "-d", str(tmp_path / "ds"), "--sandbox", "docker", timeout=600)
    assert refused.returncode == 2, refused.stdout + refused.stderr
    [line] = refused.stderr.strip().splitlines()
    assert line.startswith("error: task hemra/no-git: HEMRA cannot strip") and "the image has no git" in line, line
    assert "--allow-history 'hemra/no-git'" in line and runs(hemra_env) == []
    kept = hemra(
        hemra_env, "run", "-H", "nop", "-d", str(tmp_path / "ds"), "--sandbox", "docker",
        "--allow-history", "hemra/*", timeout=600,
    )  # fmt: skip
    assert kept.returncode == 0, kept.stdout + kept.stderr
    [run] = runs(hemra_env)
    assert show(hemra_env, run["id"])["run"]["spec"]["history_kept"] == ["hemra/no-git"]
