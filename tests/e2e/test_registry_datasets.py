"""Harbor registry datasets, offline: a registry.json made here and local git repositories served
as file:// URLs with two commits. Pinning at the older commit, HEAD refused without the flag,
running the pinned dataset, a changed repository refused against the pinned digest, and bad
input in one line with nothing recorded; all through the real `hemra` command and real git."""

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.e2e.helpers import BUNDLED, hemra, runs

TASKS = ("reverse-lines", "csv-column-sum")


def git(repo: Path, *args: str) -> str:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    done = subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, env={**os.environ, **env}, check=True
    )
    return done.stdout.strip()


@pytest.fixture
def repository(tmp_path) -> tuple[Path, str, str]:
    """(repository, older commit, newer commit): the bundled tasks under datasets/local/, then a
    second commit changing one task's instruction."""
    repo = tmp_path / "tasks-repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    for task in TASKS:
        shutil.copytree(BUNDLED / task, repo / "datasets" / "local" / task)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "first")
    older = git(repo, "rev-parse", "HEAD")
    instruction = repo / "datasets" / "local" / "reverse-lines" / "instruction.md"
    instruction.write_text(instruction.read_text() + "\nChanged upstream.\n")
    git(repo, "commit", "-q", "-am", "second")
    return repo, older, git(repo, "rev-parse", "HEAD")


def registry(path: Path, repo: Path, commit: str, head_version: bool = True) -> Path:
    def tasks(pin):
        return [
            {"name": t, "git_url": f"file://{repo}", "git_commit_id": pin, "path": f"datasets/local/{t}"} for t in TASKS
        ]

    entries = [{"name": "local-ds", "version": "1.0", "description": "two tasks", "tasks": tasks(commit)}]
    if head_version:
        entries.append({"name": "local-ds", "version": "head", "tasks": tasks("HEAD")})
    path.write_text(json.dumps(entries))
    return path


@pytest.fixture
def env(hemra_env, tmp_path, repository):
    repo, older, _ = repository
    return {**hemra_env, "HEMRA_HARBOR_REGISTRY": str(registry(tmp_path / "registry.json", repo, older))}


def pin(env: dict, *args: str) -> dict:
    result = hemra(env, "datasets", "pin", *args, "--json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_pins_the_older_commit_and_runs_it_offline(env, repository, tmp_path):
    repo, older, newer = repository
    pinned = pin(env, "harbor:local-ds@1.0")
    assert pinned["dataset_name"] == "local-ds" and len(pinned["tasks"]) == 2
    assert {t["commit"] for t in pinned["tasks"]} == {older}  # not the tip
    assert all(t["harbor_digest"].startswith("sha256:") and f"@{older}:" in t["origin"] for t in pinned["tasks"])
    copy = Path(env["HEMRA_HOME"]) / "cache" / "harbor" / "local-ds" / "1.0" / "reverse-lines" / "instruction.md"
    assert "Changed upstream" not in copy.read_text()
    # Listed, with its source.
    [listed] = json.loads(hemra(env, "datasets", "list", "--json").stdout)
    assert listed["digest"] == pinned["digest"] and "harbor:local-ds@1.0" in listed["source"]
    shown = json.loads(hemra(env, "datasets", "show", "local-ds", "--json").stdout)
    assert sorted(t["digest"] for t in shown["tasks"]) == sorted(t["digest"] for t in pinned["tasks"])
    assert all(f"@{older}:" in t["origin"] for t in shown["tasks"]), shown["tasks"]  # each task's commit
    # Runs from the pinned copy: the repository may be gone.
    shutil.rmtree(repo)
    digest = pinned["digest"].removeprefix("sha256:")[:12]
    result = hemra(env, "run", "-H", "oracle", "-H", "nop", "-d", f"harbor:local-ds@1.0@{digest}", "--label", "reg")
    assert result.returncode == 0, result.stderr + result.stdout
    assert "oracle" in result.stdout and "2/2" in result.stdout, result.stdout
    # NAME@version alone finds the pinned copy too.
    assert hemra(env, "run", "-H", "nop", "-d", "local-ds@1.0", "--label", "reg2").returncode == 0


def test_head_is_refused_without_the_flag_then_pinned_at_the_commit_fetched(env, repository):
    _, _, newer = repository
    refused = hemra(env, "datasets", "pin", "harbor:local-ds@head")
    assert refused.returncode == 2
    [line] = refused.stderr.strip().splitlines()
    assert "not pinned to a commit" in line and "--allow-head" in line, line
    pinned = pin(env, "harbor:local-ds@head", "--allow-head")
    assert {t["commit"] for t in pinned["tasks"]} == {newer}


def test_a_changed_source_is_refused_against_the_pinned_digest(env, repository, tmp_path):
    repo, _, newer = repository
    first = pin(env, "harbor:local-ds@1.0")["digest"].removeprefix("sha256:")[:12]
    # The registry now points version 1.0 at the newer commit: pinning again gives new content.
    registry(tmp_path / "registry.json", repo, newer)
    second = pin(env, "harbor:local-ds@1.0")["digest"].removeprefix("sha256:")[:12]
    assert second != first
    result = hemra(env, "run", "-H", "nop", "-d", f"harbor:local-ds@1.0@{first}")
    assert result.returncode == 2
    [line] = result.stderr.strip().splitlines()
    assert f"@{first}" in line and second in line and "changed" in line, line


@pytest.mark.parametrize(
    ("setup", "ref", "message"),
    [
        (lambda reg: reg, "harbor:nothing@1.0", "not in the registry"),
        (lambda reg: reg, "harbor:local-ds@9.9", "no such version (the registry has 1.0, head)"),
        (lambda reg: reg.write_text("[{not json"), "harbor:local-ds@1.0", "not JSON"),
        (lambda reg: reg.write_text(json.dumps({"a": 1})), "harbor:local-ds@1.0", "must be a JSON array"),
        (lambda reg: reg.unlink(), "harbor:local-ds@1.0", "cannot read"),
        (
            lambda reg: reg.write_text(reg.read_text().replace("file://", "file:///nonexistent")),
            "harbor:local-ds@1.0",
            "repository file:///nonexistent",
        ),
    ],
)
def test_bad_input_is_one_line_and_records_nothing(env, tmp_path, setup, ref, message):
    setup(tmp_path / "registry.json")
    for command in (["datasets", "pin", ref], ["run", "-H", "nop", "-d", ref]):
        result = hemra(env, *command)
        assert result.returncode == 2, result.stdout
        [line] = result.stderr.strip().splitlines()
        assert line.startswith("error:") and message in line, line
    assert runs(env) == []
    assert json.loads(hemra(env, "datasets", "list", "--json").stdout) == []
    assert not list((Path(env["HEMRA_HOME"]) / "cache" / "harbor").rglob("task.toml"))


def test_a_pin_whose_cache_is_gone_is_restored_from_the_store_offline(env, repository, tmp_path, database_url):
    """The store keeps the pinned tasks' files: with the cache folder, the repository and the
    registry all gone (and fetching forbidden), the dataset runs again, identical."""
    repo, older, _ = repository
    env = {**env, "HEMRA_DATABASE_URL": database_url}
    pinned = pin(env, "harbor:local-ds@1.0")
    cache = Path(env["HEMRA_HOME"]) / "cache" / "harbor"
    shutil.rmtree(cache)
    shutil.rmtree(repo)
    (tmp_path / "registry.json").unlink()
    offline = {**env, "HEMRA_OFFLINE": "1"}
    result = hemra(offline, "run", "-H", "oracle", "-d", "harbor:local-ds@1.0", "--label", "back")
    assert result.returncode == 0, result.stderr + result.stdout
    assert "2/2" in result.stdout, result.stdout
    copy = cache / "local-ds" / "1.0"
    source = json.loads((copy / "hemra-source.json").read_text())
    assert "the store" in source["restored_from"] and {t["commit"] for t in source["tasks"]} == {older}
    assert sorted(p.name for p in copy.iterdir() if p.is_dir()) == sorted(TASKS)  # named as the registry names them
    # One dataset in the store: the copy written back has the digest pinned, task by task.
    [listed] = json.loads(hemra(env, "datasets", "list", "--json").stdout)
    assert listed["digest"] == pinned["digest"]
    shown = json.loads(hemra(env, "datasets", "show", "local-ds", "--json").stdout)
    assert all(f"@{older}:" in t["origin"] for t in shown["tasks"]), shown["tasks"]
    # NAME@version alone is restored too.
    shutil.rmtree(cache)
    assert hemra(offline, "run", "-H", "nop", "-d", "local-ds@1.0@" + pinned["digest"][7:19]).returncode == 0


def test_a_pin_that_fails_midway_leaves_nothing_in_the_cache(env, repository, tmp_path):
    repo, older, _ = repository
    entries = json.loads((tmp_path / "registry.json").read_text())
    entries[0]["tasks"][1]["path"] = "datasets/local/nothing-here"  # the second task fails, after the first is copied
    (tmp_path / "registry.json").write_text(json.dumps(entries))
    result = hemra(env, "datasets", "pin", "harbor:local-ds@1.0")
    assert result.returncode == 2, result.stdout
    [line] = result.stderr.strip().splitlines()
    assert "nothing-here/task.toml: missing" in line, line
    cache = Path(env["HEMRA_HOME"]) / "cache"
    assert not (cache / "harbor").exists(), sorted(str(p) for p in cache.rglob("*"))
    assert json.loads(hemra(env, "datasets", "list", "--json").stdout) == []


def test_offline_a_dataset_not_pinned_here_is_refused_not_fetched(env):
    for command in (["datasets", "pin", "harbor:local-ds@1.0"], ["run", "-H", "nop", "-d", "harbor:local-ds@1.0"]):
        result = hemra({**env, "HEMRA_OFFLINE": "1"}, *command)
        assert result.returncode == 2, result.stdout
        [line] = result.stderr.strip().splitlines()
        assert "offline (HEMRA_OFFLINE=1): HEMRA would fetch dataset harbor:local-ds@1.0 from the registry" in line
    assert not (Path(env["HEMRA_HOME"]) / "cache" / "harbor").exists()
    assert runs(env) == [] and json.loads(hemra(env, "datasets", "list", "--json").stdout) == []
