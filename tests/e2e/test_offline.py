"""`hemra --offline` / HEMRA_OFFLINE=1 fetches nothing: each thing a run would fetch fails
instead, in one line naming it, exit 2, nothing recorded. Through the real `hemra` command; the
registry dataset's case is in test_registry_datasets.py (it needs that file's repositories)."""

import shutil

import pytest

from tests.e2e.helpers import BUNDLED, hemra, runs


def refused(env: dict, *args: str, offline_flag: bool = True) -> str:
    result = hemra(env, *(["--offline"] if offline_flag else []), *args)
    assert result.returncode == 2, result.stdout + result.stderr
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("error:") and "offline (HEMRA_OFFLINE=1): HEMRA would fetch" in line, line
    assert runs(env) == []
    return line


@pytest.fixture
def cli_harness(tmp_path):
    path = tmp_path / "claude.toml"
    path.write_text('kind = "cli"\nagent = "claude-code"\nversion = "2.1.332"\nmodel = "m"\n')
    return path


def test_an_agent_cli_not_in_the_tool_cache_is_refused(hemra_env, tmp_path, cli_harness):
    env = {**hemra_env, "HEMRA_TOOLS_DIR": str(tmp_path / "tools")}
    line = refused(env, "run", "-H", str(cli_harness), "-d", "hemra-offline", "-t", "reverse-lines")
    assert "harness claude" in line and "claude-code agent CLI 2.1.332 from npm" in line, line
    # The variable does the same as the flag; an unpinned agent is never in the cache.
    cli_harness.write_text('kind = "cli"\nagent = "claude-code"\nmodel = "m"\n')
    offline = {**env, "HEMRA_OFFLINE": "1"}
    line = refused(offline, "run", "-H", str(cli_harness), "-d", "hemra-offline", offline_flag=False)
    assert "claude-code agent CLI (newest) from npm" in line, line
    # In the cache: planned and recorded (the attempt itself is not this test's business).
    (tmp_path / "tools" / "claude-code@2.1.332").mkdir(parents=True)
    cli_harness.write_text('kind = "cli"\nagent = "claude-code"\nversion = "2.1.332"\nmodel = "m"\n')
    planned = hemra(offline, "run", "-H", str(cli_harness), "-d", "hemra-offline", "-t", "reverse-lines", "--detach")
    assert planned.returncode == 0, planned.stderr
    assert len(runs(env)) == 1


def test_a_docker_base_image_not_in_the_engine_is_refused_not_pulled(hemra_env, tmp_path, docker_engine):
    dataset = tmp_path / "absent-base"
    shutil.copytree(BUNDLED / "reverse-lines", dataset / "reverse-lines")
    dockerfile = dataset / "reverse-lines" / "environment" / "Dockerfile"
    dockerfile.write_text("FROM hemra-test-never-pulled.invalid/absent:1 AS base\nFROM base\nWORKDIR /app\n")
    line = refused(hemra_env, "run", "-H", "nop", "-d", str(dataset), "--sandbox", "docker")
    assert "the Docker image hemra-test-never-pulled.invalid/absent:1" in line and "reverse-lines" in line, line
