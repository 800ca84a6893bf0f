"""Bad input: one clear line naming the file and the problem, exit status 2, nothing recorded."""

import pytest

from tests.e2e.helpers import copy_task, hemra, runs

pytestmark = pytest.mark.slow


def _dataset(tmp_path, mutate):
    task = copy_task("text-stats", tmp_path / "ds")
    mutate(task)
    return str(tmp_path / "ds")


CASES = {
    "unknown run file key": (
        lambda tmp: ["run", _run_file(tmp, 'harnesses = ["oracle"]\ndatasets = ["hemra-offline"]\nfoo = 1\n')],
        ["run.toml", "unknown key 'foo'"],
    ),
    "missing harness": (lambda tmp: ["run", "-H", "nosuch", "-d", "hemra-offline"], ["harness 'nosuch' not found"]),
    "missing dataset": (lambda tmp: ["run", "-H", "oracle", "-d", "nosuch"], ["dataset 'nosuch' not found"]),
    "task without test.sh": (
        lambda tmp: ["run", "-H", "oracle", "-d", _dataset(tmp, lambda t: (t / "tests" / "test.sh").unlink())],
        ["tests/test.sh", "missing"],
    ),
    "malformed task.toml": (
        lambda tmp: [
            "run",
            "-H",
            "oracle",
            "-d",
            _dataset(tmp, lambda t: (t / "task.toml").write_text("[task\nname = 1\n")),
        ],
        ["task.toml", "malformed TOML", "line 1"],
    ),
    "Dockerfile the host cannot honour": (
        lambda tmp: [
            "run",
            "-H",
            "oracle",
            "-d",
            _dataset(
                tmp,
                lambda t: (t / "environment" / "Dockerfile").write_text(
                    "FROM debian:bookworm-slim\nWORKDIR /app\nRUN apt-get install -y jq\n"
                ),
            ),
        ],
        ["environment/Dockerfile", "line 3", "RUN", "hemra/text-stats", "container"],
    ),
    "unknown harness file key": (
        lambda tmp: [
            "run",
            "-H",
            _harness(tmp, 'kind = "program"\ncommand = "true"\nmodle = "x"\n'),
            "-d",
            "hemra-offline",
        ],
        ["bad.toml", "unknown key 'modle'"],
    ),
    "harness file holding a secret value": (
        lambda tmp: [
            "run",
            "-H",
            _harness(tmp, 'kind = "program"\ncommand = "true"\nenv = { KEY = "sk-123" }\n'),
            "-d",
            "hemra-offline",
        ],
        ["bad.toml", "names only"],
    ),
    "requirement the sandbox cannot enforce": (
        lambda tmp: ["run", "-H", "oracle", "-d", "hemra-offline", "--require", "gpu"],
        ["sandbox host cannot enforce gpu"],
    ),
    "unknown baseline": (
        lambda tmp: ["run", "-H", "oracle", "-d", "hemra-offline", "--baseline", "nop"],
        ["baseline 'nop'"],
    ),
    "dataset pinned to another digest": (
        lambda tmp: ["run", "-H", "oracle", "-d", "hemra-offline@0000"],
        ["pinned @0000"],
    ),
}


def _run_file(tmp_path, text):
    (tmp_path / "run.toml").write_text(text)
    return str(tmp_path / "run.toml")


def _harness(tmp_path, text):
    (tmp_path / "bad.toml").write_text(text)
    return str(tmp_path / "bad.toml")


@pytest.mark.parametrize("case", list(CASES))
def test_bad_input__one_line_exit_2_nothing_recorded(case, hemra_env, tmp_path):
    make_args, expected = CASES[case]
    result = hemra(hemra_env, *make_args(tmp_path), cwd=tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    for fragment in expected:
        assert fragment in lines[0]
    assert runs(hemra_env) == []
