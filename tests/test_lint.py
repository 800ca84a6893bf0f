"""Formatting and lint hold for the whole tree: pyproject.toml's [tool.ruff] for Python,
clients/eslint/eslint.config.js for the web code."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
RUFF = Path(sys.executable).parent / "ruff"


def ruff(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(RUFF), *args], cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)


def test_lint_finds_nothing():
    result = ruff("check", "--no-cache", ".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_code_is_formatted():
    result = ruff("format", "--check", "--no-cache", ".")
    assert result.returncode == 0, result.stdout + result.stderr


# The web code's linter: ESLint with clients/eslint/eslint.config.js (installed by
# scripts/build-npm.sh), over clients/dashboard and clients/harness-ts. Wherever node is,
# it runs; a missing install fails rather than skips.
ESLINT = ROOT / "clients" / "eslint" / "node_modules" / "eslint" / "bin" / "eslint.js"
WEB = ("clients/dashboard", "clients/harness-ts")


def eslint(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the web code is neither built nor linted here")
    assert ESLINT.exists(), "ESLint is missing: run `make setup` (scripts/build-npm.sh installs it)"
    # --config makes paths relative to the folder ESLint runs in: the repository's root.
    command = [node, str(ESLINT), "--config", "clients/eslint/eslint.config.js", "--max-warnings", "0", *args]
    return subprocess.run(command, cwd=ROOT, input=stdin, capture_output=True, text=True, timeout=300, check=False)


def test_the_web_code_lints_clean():
    result = eslint(*WEB)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize(
    ("path", "source", "rule"),
    [
        ("clients/dashboard/src/probe.js", "var shown = 1;\nexport { shown };\n", "no-var"),
        ("clients/dashboard/src/probe.js", "export const x = undefinedName;\n", "no-undef"),
        ("clients/harness-ts/src/probe.ts", "export const x: any = 1;\n", "@typescript-eslint/no-explicit-any"),
    ],
)
def test_the_web_linter_finds_a_planted_problem(path, source, rule):
    """The check above would pass on a config that matched no file or enabled no rule."""
    result = eslint("--stdin", "--stdin-filename", path, stdin=source)
    assert result.returncode == 1, result.stdout + result.stderr
    assert rule in result.stdout
