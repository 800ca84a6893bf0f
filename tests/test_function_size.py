"""No function over MAX_LINES lines: a longer one is split along its natural steps, so each
can be read (and named) on its own. Database migrations are exempt: they are written once,
in Alembic's shape, and never edited. COVERED is every folder of the product's code (bench/ is not the product)."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MAX_LINES = 60
#: Globs, from the repository's root, of the Python files the limit holds for.
COVERED = (
    "services/**/*.py",
    "clients/**/*.py",
    "gateway/**/*.py",
    "scripts/**/*.py",
)


def long_functions(paths, limit: int = MAX_LINES) -> list[str]:
    """`file:line name (N lines)` for each function (methods and nested ones too) of `paths`
    longer than `limit` lines; migrations and generated code are skipped."""
    found = []
    for path in sorted(paths):
        if "migrations" in path.parts or "node_modules" in path.parts or "_pb2" in path.name:
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = node.end_lineno - node.lineno + 1
                if lines > limit:
                    found.append(f"{path.name}:{node.lineno} {node.name} ({lines} lines)")
    return found


@pytest.mark.parametrize("pattern", COVERED)
def test_no_function_is_longer_than_the_limit(pattern):
    paths = list(ROOT.glob(pattern))
    assert paths, f"{pattern} matches no file: did a folder move?"
    assert long_functions(paths) == []


def test_the_checker_sees_methods_and_nested_functions(tmp_path):
    """The rule above would pass on a reader that missed the functions inside classes and functions."""
    body = "\n".join(f"            x{n} = {n}" for n in range(60))
    probe = tmp_path / "probe.py"
    probe.write_text(f"class C:\n    def method(self):\n        def inner():\n{body}\n")
    assert long_functions([probe]) == ["probe.py:2 method (62 lines)", "probe.py:3 inner (61 lines)"]
    assert long_functions([probe], limit=62) == []
    migration = tmp_path / "migrations" / "versions" / "probe.py"
    migration.parent.mkdir(parents=True)
    migration.write_text(probe.read_text())
    assert long_functions([migration]) == []
