"""The leak audit's findings on real git repositories made here: a repository whose future
commit holds the fix (tags, a branch, reflogs) leaks; the same repository stripped with the
recipe (detach at the base, delete every ref, expire the reflogs, gc --prune=now) is clean."""

import subprocess
from pathlib import Path
from types import SimpleNamespace

from hemra.services.domain.tasks import TaskFile
from hemra.services.environments import audit, audit_probe

BUGGY = "def total_price(items):\n    return sum(item.price for item in items)\n"
FIXED = "def total_price(items):\n    return sum(item.price * item.quantity for item in items if item.in_stock)\n"
FIX_LINE = "return sum(item.price * item.quantity for item in items if item.in_stock)"
TEST_SH = "#!/bin/bash\npython3 -m pytest /tests/test_prices.py -q  # the task's verifier\n"


def git(repo: Path, *args: str) -> str:
    command = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args]
    return subprocess.run(command, check=True, capture_output=True, text=True).stdout


def leaking_repo(root: Path) -> tuple[Path, str, str]:
    """A repository checked out at its base commit whose history goes on: a later commit with the
    fix on a branch and a tag, HEAD moved back (so the reflog remembers), and a stash."""
    repo = root / "shop"
    repo.mkdir()
    (repo / "prices.py").write_text(BUGGY)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    base = git(repo, "rev-parse", "HEAD").strip()
    (repo / "prices.py").write_text(FIXED)
    git(repo, "commit", "-q", "-am", "Fix total_price: quantity and stock")
    git(repo, "tag", "v2.0")
    git(repo, "branch", "future")
    gold = git(repo, "diff", base, "HEAD")
    git(repo, "reset", "-q", "--hard", base)
    return repo, base, gold


def strip(repo: Path, base: str) -> None:
    git(repo, "checkout", "-q", "--detach", base)
    for ref in git(repo, "for-each-ref", "--format=%(refname)").split():
        git(repo, "update-ref", "-d", ref)
    git(repo, "reflog", "expire", "--expire=now", "--all")
    git(repo, "gc", "-q", "--prune=now")


def task(gold: str, base: str, workdir: str) -> SimpleNamespace:
    files = [
        TaskFile("solution/gold.patch", gold.encode(), False),
        TaskFile("solution/solve.sh", b"#!/bin/bash\ngit apply solution/gold.patch\n", True),
        TaskFile("tests/test.sh", TEST_SH.encode(), True),
    ]
    return SimpleNamespace(
        files=files,
        config={"metadata": {"base_commit": base}},
        environment=SimpleNamespace(workdir=workdir, env={}),
        task_name="shop-1",
        digest="sha256:x",
    )


def probe(tmp_path: Path, repo: Path, base: str, gold: str, elsewhere: Path) -> dict:
    config = audit.probe_input(task(gold, base, str(repo)), 60)
    interfaces = tmp_path / "net"
    (interfaces / "lo").mkdir(parents=True, exist_ok=True)
    config.update(scan_roots=[str(repo), str(elsewhere)], repo_roots=[], task_folders=[], interfaces=str(interfaces))
    return audit_probe.run(config)


def kinds(result: dict, severity: str = "leak") -> set[str]:
    return {f["kind"] for f in result["findings"] if f["severity"] == severity}


def test_audit__an_unstripped_repository_leaks_its_future_commit(tmp_path):
    repo, base, gold = leaking_repo(tmp_path)
    (tmp_path / "elsewhere").mkdir()
    result = probe(tmp_path, repo, base, gold, tmp_path / "elsewhere")
    assert result["complete"]
    assert {"git_ref_ahead", "git_reflog", "git_commit_ahead", "answer_in_git"} <= kinds(result), result
    details = " | ".join(f["detail"] for f in result["findings"])
    assert "refs/tags/v2.0" in details and "refs/heads/future" in details
    assert "Fix total_price" in details  # the commit is named by its subject
    assert FIX_LINE[:40] in details
    findings, complete = audit.findings_of(result)
    assert audit.verdict_of(findings, complete) == audit.LEAKS


def test_audit__the_same_repository_stripped_is_clean(tmp_path):
    repo, base, gold = leaking_repo(tmp_path)
    strip(repo, base)
    (tmp_path / "elsewhere").mkdir()
    result = probe(tmp_path, repo, base, gold, tmp_path / "elsewhere")
    assert kinds(result) == set() and result["complete"], result
    findings, complete = audit.findings_of(result)
    assert audit.verdict_of(findings, complete) == audit.CLEAN
    # The recipe leaves ORIG_HEAD (from the reset): the ID of a commit gc removed, nothing more.
    assert [f["kind"] for f in result["findings"]] == ["git_special_head"]
    assert "does not hold" in result["findings"][0]["detail"]
    (repo / ".git" / "ORIG_HEAD").unlink()
    assert probe(tmp_path, repo, base, gold, tmp_path / "elsewhere")["findings"] == []


def test_audit__the_fix_or_the_tests_in_a_file_the_agent_reads_leak(tmp_path):
    repo, base, gold = leaking_repo(tmp_path)
    strip(repo, base)
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "cache").mkdir(parents=True)
    (elsewhere / "cache" / "prices.py").write_text(FIXED)
    (elsewhere / "test.sh").write_text(TEST_SH)
    (repo / "notes.txt").write_text("untracked, beside the code: " + FIX_LINE + "\n")
    result = probe(tmp_path, repo, base, gold, elsewhere)
    details = [f["detail"] for f in result["findings"] if f["severity"] == "leak"]
    assert any(d.startswith(str(elsewhere / "cache" / "prices.py")) for d in details), details
    assert any(str(repo / "notes.txt") in d for d in details), details
    assert any("is the task's tests/test.sh" in d for d in details), details
    # HEAD's own tracked files are never reported: they are the starting point, not the answer.
    assert not any(str(repo / "prices.py") in d for d in details)


def test_audit__a_fix_applied_in_the_working_tree_leaks(tmp_path):
    repo, base, gold = leaking_repo(tmp_path)
    strip(repo, base)
    (repo / "prices.py").write_text(FIXED)
    (tmp_path / "elsewhere").mkdir()
    result = probe(tmp_path, repo, base, gold, tmp_path / "elsewhere")
    assert any(f["kind"] == "answer_in_file" and "prices.py" in f["detail"] for f in result["findings"]), result


def test_audit__a_head_past_the_base_commit_leaks(tmp_path):
    repo, base, gold = leaking_repo(tmp_path)
    git(repo, "reset", "-q", "--hard", "v2.0")
    strip(repo, git(repo, "rev-parse", "HEAD").strip())
    (tmp_path / "elsewhere").mkdir()
    result = probe(tmp_path, repo, base, gold, tmp_path / "elsewhere")
    assert "git_head_not_base" in kinds(result), result


def test_audit__a_network_interface_leaks(tmp_path):
    repo, base, gold = leaking_repo(tmp_path)
    strip(repo, base)
    (tmp_path / "net" / "eth0").mkdir(parents=True)
    (tmp_path / "elsewhere").mkdir()
    result = probe(tmp_path, repo, base, gold, tmp_path / "elsewhere")
    assert kinds(result) == {"network"}


def test_needles__gold_lines_or_distinctive_solution_lines():
    gold = "--- a/x.py\n+++ b/x.py\n@@ -1 +1,2 @@\n-    return a\n+    return a + b\n+)\n"
    swe = task(gold, "abc", "/testbed")
    assert [(n["text"], n["file"]) for n in audit.needles(swe)] == [("return a + b", "x.py")]
    harbor = SimpleNamespace(
        files=[
            TaskFile("environment/Dockerfile", b"FROM x\nRUN echo 'already in the image, not an answer'\n", False),
            TaskFile(
                "solution/solve.sh",
                b"#!/bin/bash\n# a comment that is long enough to count\nset -euo pipefail\n"
                b"echo 'already in the image, not an answer'\nsed -i 's/ordered\\[mid\\]/(a + b) \\/ 2/' /app/s.py\n",
                True,
            ),
        ]
    )
    assert [n["text"] for n in audit.needles(harbor)] == ["sed -i 's/ordered\\[mid\\]/(a + b) \\/ 2/' /app/s.py"]
