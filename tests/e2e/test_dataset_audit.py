"""`hemra datasets audit` end to end, with real Docker: the bundled dataset is clean; a SWE-bench
instance whose evaluation image holds the repository's future (the fix's commit on a tag and a
branch, in the reflog) leaks and names the commit and the line when audited as a run keeping its
history runs it, while the same repository stripped by hand, and both under HEMRA's own history
layer, are clean; an unknown dataset is one line and exit 2. A run records the audit: no "never
audited" flag after one."""

import json
import subprocess
from pathlib import Path

import pytest

from tests.e2e.helpers import copy_task, hemra, runs, show
from tests.e2e.test_swebench_tasks import BASE, eval_script, instance, make_repo

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("docker_engine")]

LEAKY, STRIPPED = "acme__calc-1", "acme__calc-2"


def git(repo: Path, *args: str) -> str:
    command = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args]
    return subprocess.run(command, check=True, capture_output=True, text=True).stdout


def image(context: Path, repo: Path, tag: str) -> str:
    (context / "Dockerfile").write_text(f"FROM {BASE}\nCOPY {repo.name} /testbed\nWORKDIR /testbed\n")
    subprocess.run(
        ["docker", "build", "--network", "none", "-q", "-t", tag, str(context)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    return tag


@pytest.fixture(scope="module")
def instances(tmp_path_factory) -> Path:
    """Two instances of one repository at its base commit: one image unstripped (the fix's commit
    follows the base, tagged v1.1 and on branch next; HEAD reset back to the base), one stripped."""
    root = tmp_path_factory.mktemp("audit")
    repo, base, gold, test_patch = make_repo(root)
    (repo / "calc" / "__init__.py").write_text((repo / "calc" / "__init__.py").read_text().replace("a - b", "a + b"))
    git(repo, "commit", "-q", "-am", "Fix add: it subtracted")
    git(repo, "tag", "v1.1")
    git(repo, "branch", "next")
    git(repo, "reset", "-q", "--hard", base)
    leaky = image(root, repo, f"hemra-test/sweb.eval.x86_64.acme_1776_calc-1:audit-{base[:12]}")
    git(repo, "checkout", "-q", "--detach", base)
    for ref in git(repo, "for-each-ref", "--format=%(refname)").split():
        git(repo, "update-ref", "-d", ref)
    (repo / ".git" / "ORIG_HEAD").unlink(missing_ok=True)
    git(repo, "reflog", "expire", "--expire=now", "--all")
    git(repo, "gc", "-q", "--prune=now")
    stripped = image(root, repo, f"hemra-test/sweb.eval.x86_64.acme_1776_calc-2:audit-{base[:12]}")
    script = eval_script(base, test_patch)
    rows = [
        dict(instance(LEAKY, base, gold, test_patch, leaky, script)),
        dict(instance(STRIPPED, base, gold, test_patch, stripped, script)),
    ]
    path = root / "audit-instances.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def audit(env: dict, *args: str) -> subprocess.CompletedProcess:
    return hemra(env, "datasets", "audit", *args, timeout=900)


def test_audit__the_bundled_dataset_is_clean(hemra_env):
    result = audit(hemra_env, "hemra-offline", "--json")
    assert result.returncode == 0, result.stdout + result.stderr
    found = json.loads(result.stdout)
    assert found["verdict"] == "clean" and len(found["tasks"]) == 11
    for task in found["tasks"]:
        assert task["verdict"] == "clean" and task["network_mode"] == "none", task
        assert not [f for f in task.get("findings", []) if f["severity"] == "leak"], task


def test_audit__an_image_kept_with_its_history_leaks_and_hemras_environment_is_clean(hemra_env, instances):
    # As a run keeping the task's history would run it: the image as built, its future readable.
    kept = audit(hemra_env, f"swebench:{instances}", "--allow-history", f"swebench/{LEAKY}", "--json")
    assert kept.returncode == 1, kept.stdout + kept.stderr
    found = json.loads(kept.stdout)
    assert found["verdict"] == "leaks" and not found.get("name")  # shown, not recorded
    tasks = {t["task_name"]: t for t in found["tasks"]}
    leaky, clean = tasks[f"swebench/{LEAKY}"], tasks[f"swebench/{STRIPPED}"]
    assert clean["verdict"] == "clean", clean
    assert leaky["verdict"] == "leaks"
    kinds = {f["kind"] for f in leaky["findings"] if f["severity"] == "leak"}
    assert {"git_ref_ahead", "git_reflog", "git_commit_ahead", "answer_in_git"} <= kinds, leaky
    details = " | ".join(f["detail"] for f in leaky["findings"])
    assert "refs/tags/v1.1" in details and "Fix add: it subtracted" in details
    assert "'return a + b'" in details  # the gold patch's line, found in the future blob
    table = audit(hemra_env, f"swebench:{instances}", "--allow-history", f"swebench/{LEAKY}")
    assert table.returncode == 1
    assert f"swebench/{LEAKY}" in table.stdout and "leaks" in table.stdout and "clean" in table.stdout

    # HEMRA's environment, as a run uses it: its history layer left the base commit's past only.
    ours = audit(hemra_env, f"swebench:{instances}", "--json")
    assert ours.returncode == 0, ours.stdout + ours.stderr
    found = json.loads(ours.stdout)
    assert found["verdict"] == "clean" and found["name"], found  # recorded
    assert {t["verdict"] for t in found["tasks"]} == {"clean"}, found


def test_audit__an_unknown_dataset_is_one_line_and_exit_2(hemra_env):
    result = audit(hemra_env, "no-such-dataset")
    assert result.returncode == 2
    assert result.stderr.startswith("error: dataset 'no-such-dataset' not found") and result.stderr.count("\n") <= 2
    assert audit(hemra_env, "hemra-offline", "-t", "nothing-matches").returncode == 2


def _audit_flags(env: dict, label: str) -> list[str]:
    [run] = [r for r in runs(env) if r["label"] == label]
    report = show(env, run["id"])["report"]
    return [f for d in report["datasets"] for r in d["rows"] for f in r.get("flags", []) if "audit" in f]


def test_audit__a_run_records_the_audit_its_report_flags_a_never_audited_dataset(hemra_env, tmp_path):
    audited = audit(hemra_env, "hemra-offline", "-t", "hemra/fizzbuzz-limit")
    assert audited.returncode == 0, audited.stdout + audited.stderr
    first = hemra(hemra_env, "run", "-H", "oracle", "-d", "hemra-offline", "-t", "hemra/fizzbuzz-limit", "--label", "a")
    assert first.returncode == 0, first.stderr
    assert _audit_flags(hemra_env, "a") == []

    other = tmp_path / "other"
    other.mkdir()
    copy_task("fizzbuzz-limit", other, "fizz-copy")
    second = hemra(hemra_env, "run", "-H", "oracle", "-d", str(other), "--label", "b")
    assert second.returncode == 0, second.stderr
    assert _audit_flags(hemra_env, "b") == ["dataset other never audited (hemra datasets audit other)"]
    assert "never audited" in second.stdout  # the report printed at the end of the run says so
