"""A task whose needs the chosen sandbox cannot meet is refused when the run is planned, by
name, with nothing recorded: a SWE-bench-style task (its repository lives in its image) or a
prebuilt image on the host sandbox would otherwise run and score as failed."""

import pytest

from tests.e2e.helpers import copy_task, hemra, runs


@pytest.mark.parametrize(
    ("environment", "dockerfile", "message"),
    [
        (
            '[environment]\nbase_commit = "0123abcd"\n',
            True,
            "[environment] base_commit: task hemra/needs-image needs the repository its image holds at /app",
        ),
        (
            '[environment]\ndocker_image = "example/prebuilt:1"\n',
            False,
            "[environment] docker_image = 'example/prebuilt:1': task hemra/needs-image needs that image",
        ),
    ],
)
def test_a_task_needing_its_image_is_refused_on_the_host(hemra_env, tmp_path, environment, dockerfile, message):
    task = copy_task("reverse-lines", tmp_path / "ds", "needs-image")
    toml = task / "task.toml"
    toml.write_text(toml.read_text().replace("[environment]\n", environment))
    if not dockerfile:
        (task / "environment" / "Dockerfile").unlink()
    result = hemra(hemra_env, "run", "-H", "oracle", "-d", str(tmp_path / "ds"))
    assert result.returncode == 2, result.stdout + result.stderr
    [line] = result.stderr.strip().splitlines()
    assert line.startswith(f"error: {toml}: ") and message in line and "--sandbox docker" in line, line
    assert runs(hemra_env) == []
