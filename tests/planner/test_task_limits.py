"""Bad task folders are refused by name in one PlanError (issue 12): timeouts no clock holds,
[environment] keys of the wrong type, links that dangle, loop or point at a folder, names that
are not UTF-8, files that are not regular or larger than the limit."""

import os

import pytest

from hemra.services.domain import tasks
from hemra.services.domain.planerrors import PlanError
from hemra.services.domain.tasks import MAX_TIMEOUT_SECS, load_task
from tests.planner.test_tasks import make_task


@pytest.mark.parametrize(
    "table,value",
    [
        ("agent", "nan"),
        ("agent", "inf"),
        ("agent", "-inf"),
        ("agent", "1e308"),
        ("verifier", "1e12"),
        ("verifier", str(MAX_TIMEOUT_SECS + 1)),
    ],
)
def test_timeout__not_finite_or_past_seven_days__refused(tmp_path, table, value):
    folder = make_task(tmp_path / "t", toml=f"[{table}]\ntimeout_sec = {value}\n")
    with pytest.raises(PlanError) as info:
        load_task(folder)
    message = str(info.value)
    assert message.startswith(f"{folder / 'task.toml'}: [{table}] timeout_sec must be a positive number")
    assert "604,800" in message and "\n" not in message


def test_timeout__seven_days__accepted(tmp_path):
    folder = make_task(tmp_path / "t", toml=f"[agent]\ntimeout_sec = {MAX_TIMEOUT_SECS}\n")
    assert load_task(folder).agent_timeout == MAX_TIMEOUT_SECS


@pytest.mark.parametrize(
    "toml,fragment",
    [
        ('env = "abc"', "[environment].env must map names to strings"),
        ("env = { A = [1] }", "[environment].env must map names to strings"),
        ("env = { A = true }", "[environment].env must map names to strings"),
        ("workdir = 5", "[environment] workdir must be a string"),
        ('workdir = "app"', "[environment] workdir must be an absolute path"),
        ('docker_image = ["x"]', "[environment] docker_image must be a string"),
        ('cpus = "two"', "[environment] cpus must be a positive number"),
        ("cpus = nan", "[environment] cpus must be a positive number"),
        ("cpus = 0", "[environment] cpus must be a positive number"),
        ("cpus = 1e9", "[environment] cpus must be a positive number"),
        ('memory_mb = "2G"', "[environment] memory_mb must be a positive whole number"),
        ("memory_mb = 1.5", "[environment] memory_mb must be a positive whole number"),
        ("memory_mb = 99999999999999999", "[environment] memory_mb must be a positive whole number"),
    ],
)
def test_environment_key_of_the_wrong_type__refused(tmp_path, toml, fragment):
    folder = make_task(tmp_path / "t", toml=f"[environment]\n{toml}\n")
    with pytest.raises(PlanError) as info:
        load_task(folder)
    assert str(info.value).startswith(f"{folder / 'task.toml'}: {fragment}")


def test_environment_keys_in_range__accepted(tmp_path):
    folder = make_task(
        tmp_path / "t", toml='[environment]\ncpus = 2\nmemory_mb = 4096\nenv = { A = "1", B = 2 }\nworkdir = "/work"\n'
    )
    task = load_task(folder)
    assert task.environment.workdir == "/work" and task.environment.env == {"A": "1", "B": "2"}


def test_symlink_loop__refused_by_name(tmp_path):
    folder = make_task(tmp_path / "t")
    os.symlink("loop", folder / "tests" / "loop")
    with pytest.raises(PlanError, match="symbolic link loop") as info:
        load_task(folder)
    assert str(folder / "tests" / "loop") in str(info.value)


def test_dangling_symlink__refused_by_name(tmp_path):
    folder = make_task(tmp_path / "t")
    os.symlink("nowhere.txt", folder / "tests" / "gone")
    with pytest.raises(PlanError, match="'nowhere.txt', which does not exist") as info:
        load_task(folder)
    assert str(folder / "tests" / "gone") in str(info.value)


def test_symlink_to_a_folder_inside_the_task__refused_by_name(tmp_path):
    folder = make_task(tmp_path / "t")
    os.symlink("../environment", folder / "tests" / "env")
    with pytest.raises(PlanError, match="a symbolic link to a folder") as info:
        load_task(folder)
    assert str(folder / "tests" / "env") in str(info.value)


def test_symlink_to_a_file_inside_the_task__read_as_the_file(tmp_path):
    folder = make_task(tmp_path / "t")
    os.symlink("../environment/data.txt", folder / "tests" / "data.txt")
    files = {f.path: f.data for f in load_task(folder).files}
    assert files["tests/data.txt"] == b"data\n"


def test_file_name_not_utf8__refused_by_name(tmp_path):
    folder = make_task(tmp_path / "t")
    with open(os.path.join(os.fsencode(folder / "tests"), b"bad\xff.txt"), "wb") as handle:
        handle.write(b"x")
    with pytest.raises(PlanError, match="not UTF-8") as info:
        load_task(folder)
    assert str(folder / "tests" / "bad\ufffd.txt") in str(info.value)


def test_fifo__refused_without_blocking(tmp_path):
    folder = make_task(tmp_path / "t")
    os.mkfifo(folder / "tests" / "pipe")
    with pytest.raises(PlanError, match="not a regular file"):
        load_task(folder)


def test_file_over_the_limit__refused_by_name_before_it_is_read(tmp_path, monkeypatch):
    monkeypatch.setattr(tasks, "MAX_FILE_BYTES", 1000)
    folder = make_task(tmp_path / "t")
    with open(folder / "environment" / "big.bin", "wb") as handle:
        handle.truncate(1001)  # sparse: nothing to read unless the limit is ignored
    with pytest.raises(PlanError) as info:
        load_task(folder)
    assert str(info.value) == f"{folder / 'environment' / 'big.bin'}: 1,001 bytes; a task file may hold at most 0 MiB"


def test_file_limit__the_importers():
    from hemra.services.domain.tree import MAX_FILE_BYTES

    assert tasks.MAX_FILE_BYTES == MAX_FILE_BYTES == 200 * 1024 * 1024
