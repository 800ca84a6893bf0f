"""deploy/build-image.sh takes an image of the same name as its result, building nothing, when
that image's dev.hemra.inputs label is the fingerprint of today's inputs: the fingerprint must
move with every file the image takes from the checkout and stay put for everything else."""

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import REPO

pytestmark = pytest.mark.usefixtures("docker_engine")  # the base image's id is an input

#: A checkout of the shape build-image.sh reads: what goes into the image, and what does not.
FILES = {
    "pyproject.toml": (REPO / "pyproject.toml").read_text(),
    "setup.py": "# packages\n",
    ".gitignore": "__pycache__/\nnode_modules/\ndist/\n",
    "protos/hemra/__init__.py": "",
    "services/store/server.py": "# the store\n",
    "gateway/app.py": "# the gateway\n",
    "clients/cli/main.py": "# the CLI\n",
    "clients/dashboard/package-lock.json": "{}\n",
    "examples/hemra-offline/fizzbuzz/task.toml": 'version = "1.0"\n',
    "scripts/build-npm.sh": "# npm builds\n",
    "deploy/Dockerfile": "FROM scratch\n",
    "deploy/agents.txt": "claude-code @anthropic-ai/claude-code 2.1.332 no\n",
    "deploy/engine.sh": "# the executor's engine\n",
    "tests/test_store.py": "# a test\n",
    "docs/deploy.md": "# Deploy\n",
    "bench/queue.py": "# a benchmark\n",
    "README.md": "# HEMRA\n",
}


@pytest.fixture
def checkout(tmp_path):
    root = tmp_path / "checkout"
    for name, text in FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    shutil.copy(REPO / "deploy" / "build-image.sh", root / "deploy" / "build-image.sh")
    git = ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "checkout"], check=True)
    return root


def fingerprint(root: Path) -> str:
    result = subprocess.run(
        ["bash", "deploy/build-image.sh", "--fingerprint"], cwd=root, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout.strip()


def test_fingerprint__moves_with_each_input_of_the_image_and_with_nothing_else(checkout):
    first = fingerprint(checkout)
    assert re.fullmatch(r"[0-9a-f]{64}", first)
    assert fingerprint(checkout) == first

    # Outside the image: tests, docs, benchmarks, the README, ignored build output.
    for name in ["tests/test_store.py", "docs/deploy.md", "bench/queue.py", "README.md"]:
        (checkout / name).write_text("changed\n")
    (checkout / "tests/test_new.py").write_text("# new\n")
    (checkout / "services/store/__pycache__").mkdir()
    (checkout / "services/store/__pycache__/server.cpython-311.pyc").write_bytes(b"\0")
    (checkout / "clients/dashboard/dist").mkdir()
    (checkout / "clients/dashboard/dist/index.html").write_text("<html>\n")
    assert fingerprint(checkout) == first

    # Each input, one after another: an edit, a new file, a file made executable.
    seen = {first}
    inputs = [name for name in FILES if name.split("/")[0] not in {".gitignore", "tests", "docs", "bench", "README.md"}]
    for name in inputs:
        with (checkout / name).open("a") as f:
            f.write("# changed\n")
        changed = fingerprint(checkout)
        assert changed not in seen, f"{name} goes into the image, yet its edit kept the fingerprint"
        seen.add(changed)
    (checkout / "services/store/new_module.py").write_text("# new\n")
    assert fingerprint(checkout) not in seen
    seen.add(fingerprint(checkout))
    (checkout / "deploy/engine.sh").chmod(0o755)
    assert fingerprint(checkout) not in seen


def test_outside_a_git_checkout__no_fingerprint_and_so_no_reuse(checkout):
    shutil.rmtree(checkout / ".git")
    assert fingerprint(checkout) == ""
