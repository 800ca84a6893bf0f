"""hemra.services.domain.tasks and datasets: loading Harbor-format task folders and pinning them by digest."""

import os
import shutil
from pathlib import Path

import pytest

from hemra.services.domain.planerrors import NotFound, PlanError
from hemra.services.domain.tasks import DEFAULT_AGENT_TIMEOUT, DEFAULT_VERIFIER_TIMEOUT, load_task
from hemra.services.planner import datasets


def make_task(
    folder: Path,
    name: str | None = None,
    toml: str | None = None,
    dockerfile: str = "FROM ubuntu:24.04\nWORKDIR /app\nCOPY data.txt /app/\n",
    extra: dict[str, str] | None = None,
) -> Path:
    """A complete task folder: task.toml, instruction.md, environment/, tests/, solution/."""
    folder.mkdir(parents=True, exist_ok=True)
    if toml is None:
        toml = f'[task]\nname = "{name}"\n' if name else 'version = "1.0"\n'
    (folder / "task.toml").write_text(toml)
    (folder / "instruction.md").write_text("Write hello to /app/out.txt\n")
    (folder / "environment").mkdir(exist_ok=True)
    (folder / "environment" / "Dockerfile").write_text(dockerfile)
    (folder / "environment" / "data.txt").write_text("data\n")
    (folder / "tests").mkdir(exist_ok=True)
    (folder / "tests" / "test.sh").write_text("#!/bin/sh\necho 1 > /logs/verifier/reward.txt\n")
    (folder / "tests" / "test.sh").chmod(0o755)
    (folder / "solution").mkdir(exist_ok=True)
    (folder / "solution" / "solve.sh").write_text("#!/bin/sh\necho hello > /app/out.txt\n")
    (folder / "solution" / "solve.sh").chmod(0o755)
    for rel, text in (extra or {}).items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text)
    return folder


# --- load_task ----------------------------------------------------------------


def test_load_task__name_from_task_table(tmp_path):
    task = load_task(make_task(tmp_path / "folder-name", name="real-name"))
    assert task.task_name == "real-name"


def test_load_task__name_defaults_to_folder(tmp_path):
    task = load_task(make_task(tmp_path / "folder-name"))
    assert task.task_name == "folder-name"


def test_load_task__reads_files_and_environment(tmp_path):
    task = load_task(make_task(tmp_path / "t"))
    paths = [f.path for f in task.files]
    assert {
        "task.toml",
        "instruction.md",
        "environment/Dockerfile",
        "environment/data.txt",
        "tests/test.sh",
        "solution/solve.sh",
    } == set(paths)
    assert task.instruction == "Write hello to /app/out.txt\n"
    assert task.has_solution
    assert task.environment.workdir == "/app"
    assert [(c.source, c.destination) for c in task.environment.copies] == [("data.txt", "/app/")]
    executable = {f.path: f.executable for f in task.files}
    assert executable["tests/test.sh"] is True
    assert executable["instruction.md"] is False
    assert task.digest.startswith("sha256:") and len(task.digest) == 7 + 64


def test_load_task__ignores_git_and_caches(tmp_path):
    folder = make_task(tmp_path / "t")
    before = load_task(folder).digest
    (folder / ".git").mkdir()
    (folder / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (folder / "tests" / "__pycache__").mkdir()
    (folder / "tests" / "__pycache__" / "x.pyc").write_bytes(b"\0\1")
    (folder / ".DS_Store").write_bytes(b"junk")
    task = load_task(folder)
    assert task.digest == before
    assert not any(".git" in f.path or "__pycache__" in f.path or ".DS_Store" in f.path for f in task.files)


def test_load_task__timeouts_and_verifier_env(tmp_path):
    toml = (
        '[task]\nname = "t"\n[agent]\ntimeout_sec = 120\n[verifier]\ntimeout_sec = 30.5\n'
        '[verifier.env]\nAPI_URL = "http://x"\nLEVEL = 3\n[solution.env]\nS = "1"\n'
    )
    task = load_task(make_task(tmp_path / "t", toml=toml))
    assert task.agent_timeout == 120.0
    assert task.verifier_timeout == 30.5
    assert task.verifier_env == {"API_URL": "http://x", "LEVEL": "3"}
    assert task.solution_env == {"S": "1"}


def test_load_task__default_timeouts(tmp_path):
    task = load_task(make_task(tmp_path / "t"))
    assert task.agent_timeout == DEFAULT_AGENT_TIMEOUT
    assert task.verifier_timeout == DEFAULT_VERIFIER_TIMEOUT
    assert task.verifier_env == {}


@pytest.mark.parametrize("value", ["0", "-5", '"ten"', "true"])
def test_load_task__bad_timeout_raises(tmp_path, value):
    folder = make_task(tmp_path / "t", toml=f"[agent]\ntimeout_sec = {value}\n")
    with pytest.raises(PlanError, match="timeout_sec must be a positive number") as info:
        load_task(folder)
    assert str(folder / "task.toml") in str(info.value)


def test_load_task__verifier_env_not_a_table_raises(tmp_path):
    folder = make_task(tmp_path / "t", toml='[verifier]\nenv = ["A"]\n')
    with pytest.raises(PlanError, match=r"\[verifier\]\.env must map names to strings"):
        load_task(folder)


def test_load_task__missing_test_sh(tmp_path):
    folder = make_task(tmp_path / "t")
    (folder / "tests" / "test.sh").unlink()
    with pytest.raises(PlanError) as info:
        load_task(folder)
    assert str(folder / "tests" / "test.sh") in str(info.value)
    assert "missing" in str(info.value)


def test_load_task__missing_instruction(tmp_path):
    folder = make_task(tmp_path / "t")
    (folder / "instruction.md").unlink()
    with pytest.raises(PlanError) as info:
        load_task(folder)
    assert str(folder / "instruction.md") in str(info.value)


def test_load_task__missing_environment(tmp_path):
    folder = make_task(tmp_path / "t")
    shutil.rmtree(folder / "environment")
    with pytest.raises(PlanError) as info:
        load_task(folder)
    assert str(folder / "environment") in str(info.value)
    assert "missing" in str(info.value)


def test_load_task__missing_task_toml(tmp_path):
    folder = make_task(tmp_path / "t")
    (folder / "task.toml").unlink()
    with pytest.raises(PlanError) as info:
        load_task(folder)
    assert str(folder / "task.toml") in str(info.value)


def test_load_task__malformed_toml_names_file_and_line(tmp_path):
    folder = make_task(tmp_path / "t", toml='[task]\nname = "ok"\nbroken = = 1\n')
    with pytest.raises(PlanError) as info:
        load_task(folder)
    message = str(info.value)
    assert str(folder / "task.toml") in message
    assert "malformed TOML" in message
    assert "line 3" in message


def test_load_task__copy_source_missing_names_dockerfile_and_line(tmp_path):
    folder = make_task(tmp_path / "t", dockerfile="FROM x\nWORKDIR /app\n\nCOPY absent.txt /app/\n")
    with pytest.raises(PlanError) as info:
        load_task(folder)
    message = str(info.value)
    assert str(folder / "environment" / "Dockerfile") in message
    assert "line 4" in message
    assert "absent.txt" in message


def test_load_task__bad_dockerfile_names_dockerfile(tmp_path):
    folder = make_task(tmp_path / "t", dockerfile="FROM x\nCOPY ../outside /app/\n")
    with pytest.raises(PlanError) as info:
        load_task(folder)
    assert str(folder / "environment" / "Dockerfile") in str(info.value)
    assert "line 2" in str(info.value)


def test_load_task__no_dockerfile_uses_docker_image_and_app(tmp_path):
    folder = make_task(tmp_path / "t", toml='[environment]\ndocker_image = "python:3.12"\n[environment.env]\nX = 1\n')
    (folder / "environment" / "Dockerfile").unlink()
    task = load_task(folder)
    assert task.environment.base_image == "python:3.12"
    assert task.environment.workdir == "/app"
    assert task.environment.env == {"X": "1"}


def test_load_task__multi_step_refused(tmp_path):
    folder = make_task(tmp_path / "t", toml='[[steps]]\nname = "one"\n')
    with pytest.raises(PlanError, match="multi-step"):
        load_task(folder)


# --- task digest --------------------------------------------------------------


def test_task_digest__stable_when_nothing_changes(tmp_path):
    folder = make_task(tmp_path / "t")
    assert load_task(folder).digest == load_task(folder).digest


def test_task_digest__same_content_in_another_folder(tmp_path):
    a = load_task(make_task(tmp_path / "a" / "task", name="same"))
    b = load_task(make_task(tmp_path / "b" / "elsewhere", name="same"))
    assert a.digest == b.digest


@pytest.mark.parametrize(
    "change",
    ["instruction", "test_file", "new_test_file", "data_file", "exec_bit", "task_toml", "rename", "remove_solution"],
)
def test_task_digest__changes_when_any_file_changes(tmp_path, change):
    folder = make_task(tmp_path / "t")
    before = load_task(folder).digest
    if change == "instruction":
        (folder / "instruction.md").write_text("Write goodbye\n")
    elif change == "test_file":
        (folder / "tests" / "test.sh").write_text("#!/bin/sh\necho 0 > /logs/verifier/reward.txt\n")
    elif change == "new_test_file":
        (folder / "tests" / "helper.py").write_text("")
    elif change == "data_file":
        (folder / "environment" / "data.txt").write_text("data!\n")
    elif change == "exec_bit":
        os.chmod(folder / "environment" / "data.txt", 0o755)
    elif change == "task_toml":
        (folder / "task.toml").write_text('version = "1.1"\n')
    elif change == "rename":
        (folder / "solution" / "solve.sh").rename(folder / "solution" / "solve2.sh")
    elif change == "remove_solution":
        shutil.rmtree(folder / "solution")
    assert load_task(folder).digest != before


# --- datasets -----------------------------------------------------------------


def make_dataset(root: Path, names=("alpha", "beta", "gamma")) -> Path:
    for name in names:
        make_task(root / name)
    return root


def test_load_dataset__tasks_sorted_and_named_by_folder(tmp_path):
    dataset = datasets.load_dataset(make_dataset(tmp_path / "ds"))
    assert dataset.name == "ds"
    assert [t.task_name for t in dataset.tasks] == ["alpha", "beta", "gamma"]
    assert dataset.digest.startswith("sha256:")


def test_load_dataset__name_from_dataset_toml(tmp_path):
    root = make_dataset(tmp_path / "ds")
    (root / "dataset.toml").write_text('name = "pretty"\n')
    assert datasets.load_dataset(root).name == "pretty"


def test_load_dataset__single_task_folder_is_a_dataset(tmp_path):
    dataset = datasets.load_dataset(make_task(tmp_path / "solo"))
    assert [t.task_name for t in dataset.tasks] == ["solo"]


def test_load_dataset__digest_changes_when_a_task_changes(tmp_path):
    root = make_dataset(tmp_path / "ds")
    before = datasets.load_dataset(root).digest
    assert datasets.load_dataset(root).digest == before
    (root / "beta" / "tests" / "test.sh").write_text("#!/bin/sh\nexit 1\n")
    after = datasets.load_dataset(root).digest
    assert after != before


def test_load_dataset__digest_independent_of_location(tmp_path):
    a = datasets.load_dataset(make_dataset(tmp_path / "one" / "ds"))
    b = datasets.load_dataset(make_dataset(tmp_path / "two" / "other"))
    assert a.digest == b.digest


def test_load_dataset__duplicate_task_names_raise(tmp_path):
    root = tmp_path / "ds"
    make_task(root / "first", name="dup")
    make_task(root / "second", name="dup")
    with pytest.raises(PlanError, match="'dup'") as info:
        datasets.load_dataset(root)
    assert str(root / "first") in str(info.value) and str(root / "second") in str(info.value)


def test_load_dataset__folder_without_task_toml_raises(tmp_path):
    root = make_dataset(tmp_path / "ds", names=("alpha",))
    (root / "stray").mkdir()
    with pytest.raises(PlanError) as info:
        datasets.load_dataset(root)
    assert str(root / "stray" / "task.toml") in str(info.value)


def test_load_dataset__empty_raises(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(PlanError, match="holds no tasks"):
        datasets.load_dataset(tmp_path / "empty")


def test_resolve__by_path(tmp_path):
    root = make_dataset(tmp_path / "ds")
    dataset = datasets.resolve(str(root), home=tmp_path / "home")
    assert dataset.source == root.resolve()
    assert len(dataset.tasks) == 3


def test_resolve__by_name_on_search_path(tmp_path, monkeypatch):
    make_dataset(tmp_path / "shelf" / "mybench")
    monkeypatch.setenv("HEMRA_DATASETS_PATH", str(tmp_path / "nothing-here") + os.pathsep + str(tmp_path / "shelf"))
    (tmp_path / "cwd").mkdir()
    monkeypatch.chdir(tmp_path / "cwd")
    dataset = datasets.resolve("mybench", home=tmp_path / "home")
    assert dataset.name == "mybench"
    assert dataset.source == (tmp_path / "shelf" / "mybench").resolve()


def test_resolve__by_name_in_home_datasets(tmp_path, monkeypatch):
    monkeypatch.delenv("HEMRA_DATASETS_PATH", raising=False)
    (tmp_path / "cwd").mkdir()
    monkeypatch.chdir(tmp_path / "cwd")
    make_dataset(tmp_path / "home" / "datasets" / "homebench", names=("one",))
    dataset = datasets.resolve("homebench", home=tmp_path / "home")
    assert [t.task_name for t in dataset.tasks] == ["one"]


def test_resolve__name_with_digest_prefix(tmp_path, monkeypatch):
    make_dataset(tmp_path / "shelf" / "mybench")
    monkeypatch.setenv("HEMRA_DATASETS_PATH", str(tmp_path / "shelf"))
    (tmp_path / "cwd").mkdir()
    monkeypatch.chdir(tmp_path / "cwd")
    digest = datasets.resolve("mybench", home=tmp_path / "home").digest
    short = digest.removeprefix("sha256:")[:12]
    assert datasets.resolve(f"mybench@{short}", home=tmp_path / "home").digest == digest
    assert datasets.resolve(f"mybench@sha256:{short}", home=tmp_path / "home").digest == digest


def test_resolve__wrong_digest_prefix_raises(tmp_path, monkeypatch):
    make_dataset(tmp_path / "shelf" / "mybench")
    monkeypatch.setenv("HEMRA_DATASETS_PATH", str(tmp_path / "shelf"))
    (tmp_path / "cwd").mkdir()
    monkeypatch.chdir(tmp_path / "cwd")
    digest = datasets.resolve("mybench", home=tmp_path / "home").digest.removeprefix("sha256:")
    wrong = ("0" if digest[0] != "0" else "1") + digest[1:8]
    with pytest.raises(PlanError) as info:
        datasets.resolve(f"mybench@{wrong}", home=tmp_path / "home")
    assert not isinstance(info.value, NotFound)
    assert wrong in str(info.value)
    assert "changed" in str(info.value)


def test_resolve__missing_name_raises_not_found(tmp_path, monkeypatch):
    monkeypatch.setenv("HEMRA_DATASETS_PATH", str(tmp_path / "shelf"))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(NotFound, match="'no-such-bench' not found") as info:
        datasets.resolve("no-such-bench", home=tmp_path / "home")
    assert str(tmp_path / "shelf") in str(info.value)


def test_resolve__missing_path_raises_not_found(tmp_path):
    with pytest.raises(NotFound, match="no such folder"):
        datasets.resolve(str(tmp_path / "absent" / "ds"), home=tmp_path / "home")


def test_resolve__relative_path_against_base(tmp_path):
    make_dataset(tmp_path / "project" / "bench", names=("one",))
    dataset = datasets.resolve("./bench", home=tmp_path / "home", base=tmp_path / "project")
    assert dataset.source == (tmp_path / "project" / "bench").resolve()


# --- select_tasks -------------------------------------------------------------


def _names(tasks):
    return [t.task_name for t in tasks]


@pytest.fixture
def four_tasks(tmp_path):
    root = tmp_path / "ds"
    for folder in ("fix-bug", "fix-typo", "add-feature"):
        make_task(root / folder)
    make_task(root / "folder-x", name="named-x")
    return datasets.load_dataset(root).tasks


def test_select_tasks__all_when_no_patterns(four_tasks):
    assert _names(datasets.select_tasks(four_tasks, [], [])) == ["add-feature", "fix-bug", "fix-typo", "named-x"]


def test_select_tasks__include_glob(four_tasks):
    assert _names(datasets.select_tasks(four_tasks, ["fix-*"], [])) == ["fix-bug", "fix-typo"]


def test_select_tasks__several_includes(four_tasks):
    assert _names(datasets.select_tasks(four_tasks, ["fix-bug", "add-?eature"], [])) == ["add-feature", "fix-bug"]


def test_select_tasks__exclude_glob(four_tasks):
    assert _names(datasets.select_tasks(four_tasks, [], ["*-typo", "add*"])) == ["fix-bug", "named-x"]


def test_select_tasks__include_and_exclude(four_tasks):
    assert _names(datasets.select_tasks(four_tasks, ["fix-*"], ["*bug"])) == ["fix-typo"]


def test_select_tasks__matches_folder_name_too(four_tasks):
    assert _names(datasets.select_tasks(four_tasks, ["folder-*"], [])) == ["named-x"]
    assert _names(datasets.select_tasks(four_tasks, [], ["folder-x"])) == ["add-feature", "fix-bug", "fix-typo"]


def test_select_tasks__case_sensitive(four_tasks):
    assert datasets.select_tasks(four_tasks, ["FIX-*"], []) == []
