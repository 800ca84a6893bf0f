"""SWE-bench instances as runnable tasks, offline, with the real swebench package and Docker:
a tiny instance set in SWE-bench 5's row format (a small Python repository in git, its base
commit, a test patch, a gold patch, FAIL_TO_PASS / PASS_TO_PASS, an eval script), the
instance's evaluation image built here from a local base with git. Oracle resolves it, nop
does not, and HEMRA's report is the one the swebench package's grading gives for the same log."""

import base64
import hashlib
import json
import re
import subprocess
from pathlib import Path

import pytest

from tests.e2e.helpers import hemra, runs, show

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("docker_engine")]

BASE = "hemra-swebench-base:bookworm"
IID = "acme__calc-1"
BROKEN_IID = "acme__calc-2"
CALC = "def add(a, b):\n    return a - b\n\n\ndef double(a):\n    return a * 2\n"
OLD_TESTS = (
    "import unittest\n\nfrom calc import double\n\n\n"
    "class CalcTest(unittest.TestCase):\n    def test_double(self):\n        self.assertEqual(double(4), 8)\n"
)
NEW_TESTS = OLD_TESTS.replace("from calc import double", "from calc import add, double") + (
    "\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n"
)
F2P = "test_add (tests.test_calc.CalcTest.test_add)"
P2P = "test_double (tests.test_calc.CalcTest.test_double)"


def git(repo: Path, *args: str) -> str:
    command = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args]
    return subprocess.run(command, check=True, capture_output=True, text=True).stdout


def make_repo(root: Path) -> tuple[Path, str, str, str]:
    """The repository at its base commit, and the gold patch and test patch against it."""
    repo = root / "calc"
    (repo / "calc").mkdir(parents=True)
    (repo / "tests").mkdir()
    (repo / "calc" / "__init__.py").write_text(CALC)
    (repo / "tests" / "__init__.py").write_text("")
    (repo / "tests" / "test_calc.py").write_text(OLD_TESTS)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    base = git(repo, "rev-parse", "HEAD").strip()
    (repo / "calc" / "__init__.py").write_text(CALC.replace("a - b", "a + b"))
    gold = git(repo, "diff")
    git(repo, "checkout", "-q", "--", ".")
    (repo / "tests" / "test_calc.py").write_text(NEW_TESTS)
    test_patch = git(repo, "diff")
    git(repo, "checkout", "-q", "--", ".")
    return repo, base, gold, test_patch


def eval_script(base: str, test_patch: str) -> str:
    """Shaped as SWE-bench 5's eval scripts are (the row's eval_script field)."""
    return "\n".join(
        [
            "#!/bin/bash",
            "set -uxo pipefail",
            "cd /testbed",
            "git config --global --add safe.directory /testbed",
            "git status",
            f"git -c core.fileMode=false diff {base}",
            f"git checkout {base} tests/test_calc.py",
            "git apply -v - <<'EOF_114329324912'",
            test_patch.rstrip("\n"),
            "EOF_114329324912",
            ": '>>>>> Start Test Output'",
            "python3 -m unittest -v tests.test_calc",
            ": '>>>>> End Test Output'",
            f"git checkout {base} tests/test_calc.py",
        ]
    )


def build_image(repo: Path, tag: str) -> None:
    """The instance's evaluation image: the repository at /testbed, from a local base with git."""
    (repo.parent / "Dockerfile").write_text(f"FROM {BASE}\nCOPY calc /testbed\nWORKDIR /testbed\n")
    subprocess.run(
        ["docker", "build", "--network", "none", "-q", "-t", tag, str(repo.parent)],
        check=True,
        capture_output=True,
        timeout=300,
    )


def instance(iid: str, base: str, gold: str, test_patch: str, image: str, script: str) -> dict:
    return {
        "repo": "acme/calc",
        "instance_id": iid,
        "base_commit": base,
        "patch": gold,
        "test_patch": test_patch,
        "problem_statement": "add(a, b) subtracts; it must add.",
        "hints_text": "",
        "created_at": "2026-01-01T00:00:00Z",
        "version": "1.0",
        "FAIL_TO_PASS": json.dumps([F2P]),
        "PASS_TO_PASS": json.dumps([P2P]),
        "environment_setup_commit": base,
        "image": image,
        "eval_script": script,
        "log_parser": "parse_log_django",
        "eval_type": "pass_and_fail",
    }


@pytest.fixture(scope="module")
def instances(tmp_path_factory) -> Path:
    """instances.jsonl: one instance, and one whose environment runs out of memory."""
    root = tmp_path_factory.mktemp("swebench")
    repo, base, gold, test_patch = make_repo(root)
    image = f"hemra-test/sweb.eval.x86_64.acme_1776_calc-1:{base[:12]}"
    build_image(repo, image)
    good = instance(IID, base, gold, test_patch, image, eval_script(base, test_patch))
    broken = instance(
        BROKEN_IID, base, gold, test_patch, image, "#!/bin/bash\nset -uxo pipefail\necho 'Cannot allocate memory'\n"
    )
    path = root / "instances.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in (good, broken)))
    return path


def blob(env: dict, digest: str) -> bytes:
    return (Path(env["HEMRA_HOME"]) / "blobs" / "sha256" / digest[7:9] / digest[9:]).read_bytes()


def artifact(env: dict, attempt: dict, path: str) -> bytes:
    [found] = [a for a in attempt["artifacts"] if a["path"] == path]
    return blob(env, found["blob_digest"])


def test_oracle_resolves_nop_does_not__graded_as_swebench_grades(hemra_env, instances):
    from swebench.harness.grading import get_eval_report
    from swebench.harness.utils import make_test_spec

    ref = f"swebench:{instances}"
    pinned = hemra(hemra_env, "datasets", "pin", ref, "--json")
    assert pinned.returncode == 0, pinned.stderr
    pinned = json.loads(pinned.stdout)
    assert sorted(t["task_name"] for t in pinned["tasks"]) == [f"swebench/{IID}", f"swebench/{BROKEN_IID}"]
    [origin] = {t["origin"] for t in pinned["tasks"]}  # the file, and a digest of its rows
    assert re.fullmatch(rf"swebench:{re.escape(str(instances))}@[0-9a-f]{{12}}", origin), origin
    rows = {json.loads(line)["instance_id"]: json.loads(line) for line in instances.read_text().splitlines()}
    folder = Path(hemra_env["HEMRA_HOME"]) / "cache" / "swebench"
    [tasks] = list(folder.iterdir())
    # The eval script is the one the harness runs (its exit-status line included).
    assert (tasks / IID / "tests" / "eval.sh").read_text() == make_test_spec(rows[IID]).eval_script

    result = hemra(
        hemra_env, "run", "-H", "oracle", "-H", "nop", "-d", ref, "-t", f"swebench/{IID}", "--sandbox", "docker",
        timeout=600,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr + result.stdout
    [run] = runs(hemra_env)
    attempts = show(hemra_env, run["id"])["attempts"]
    by_harness = {a["harness_name"]: a for a in attempts}
    assert by_harness["oracle"]["score"]["rewards"] == {"resolved": 1.0}
    assert by_harness["nop"]["score"]["rewards"] == {"resolved": 0.0}  # an empty patch fails

    for attempt in by_harness.values():
        log = artifact(hemra_env, attempt, "/logs/verifier/test_output.txt")
        patch = artifact(hemra_env, attempt, "/logs/verifier/model.patch").decode()
        ours = json.loads(artifact(hemra_env, attempt, "/logs/verifier/report.json"))
        (instances.parent / "test_output.txt").write_bytes(log)
        theirs = get_eval_report(
            make_test_spec(rows[IID]),
            {"instance_id": IID, "model_name_or_path": "hemra", "model_patch": patch},
            str(instances.parent / "test_output.txt"),
            include_tests_status=True,
        )
        assert ours == theirs
    assert json.loads(artifact(hemra_env, by_harness["oracle"], "/logs/verifier/report.json"))[IID]["tests_status"][
        "FAIL_TO_PASS"
    ] == {"success": [F2P], "failure": []}
    assert "return a + b" in artifact(hemra_env, by_harness["oracle"], "/logs/verifier/model.patch").decode()


def test_an_environment_failure_in_the_log_is_the_agents_failure(hemra_env, instances):
    # HEMRA built and started the environment before anything ran, so a log that reads as
    # SWE-bench's environment failure says what the code under test printed: a result.
    result = hemra(
        hemra_env, "run", "-H", "oracle", "-d", f"swebench:{instances}", "-t", f"swebench/{BROKEN_IID}",
        "--sandbox", "docker", "--max-infra-retries", "0", timeout=600,
    )  # fmt: skip
    [run] = runs(hemra_env)
    [attempt] = show(hemra_env, run["id"])["attempts"]
    assert attempt["outcome"] == "OUTCOME_COMPLETED", (attempt, result.stdout)
    assert attempt["score"]["state"] == "SCORE_STATE_SCORED" and attempt["score"]["rewards"] == {"resolved": 0.0}
    assert attempt["score"]["fault"] == "environment_signature" and "out_of_memory" in attempt["score"]["error"]


def test_an_agent_that_prints_the_environment_failure_signature_is_failed_not_ungraded(hemra_env, instances, tmp_path):
    (tmp_path / "harnesses").mkdir()
    (tmp_path / "harnesses" / "forger.toml").write_text('kind = "program"\ncommand = ["bash", "forger.sh"]\n')
    # The code under test prints what SWE-bench reads as an errored run out of memory, and exits.
    forged = 'import os\nprint(">>>>> Tests Errored")\nprint("Cannot allocate memory")\nos._exit(1)\n'
    (tmp_path / "harnesses" / "forger.sh").write_text(
        f"hemra harness exec 'echo {base64.b64encode(forged.encode()).decode()} | base64 -d > /testbed/tests/__init__.py'\n"
    )
    result = hemra(
        hemra_env, "run", "-H", "forger", "-d", f"swebench:{instances}", "-t", f"swebench/{IID}",
        "--sandbox", "docker", "--max-infra-retries", "0", cwd=tmp_path, timeout=600,
    )  # fmt: skip
    [run] = runs(hemra_env)
    [attempt] = show(hemra_env, run["id"])["attempts"]
    assert attempt["outcome"] == "OUTCOME_COMPLETED", (attempt, result.stdout + result.stderr)
    assert attempt["score"]["rewards"] == {"resolved": 0.0}, attempt
    log = artifact(hemra_env, attempt, "/logs/verifier/test_output.txt")
    assert attempt["score"].get("fault") == "environment_signature", (attempt, log)
    assert b"Cannot allocate memory" in log


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda row: row.pop("eval_script"), "missing eval_script"),
        (lambda row: row.update(log_parser="parse_log_nothing"), "log_parser 'parse_log_nothing'"),
        (lambda row: row.update(FAIL_TO_PASS="[not json"), "FAIL_TO_PASS is not a list"),
        (lambda row: row.update(instance_id="../etc"), "is not <owner>__<repo>-<number>"),
        (lambda row: row.update(image="calc:1\nRUN touch /owned"), "is not an image reference"),
    ],
)
def test_bad_instances_are_one_line_and_record_nothing(hemra_env, instances, tmp_path, change, message):
    row = json.loads(instances.read_text().splitlines()[0])
    change(row)
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(row) + "\n")
    result = hemra(hemra_env, "run", "-H", "oracle", "-d", f"swebench:{path}", "--sandbox", "docker")
    assert result.returncode == 2, result.stdout
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("error:") and message in line and "bad.jsonl" in line, line
    assert runs(hemra_env) == []
    assert not (Path(hemra_env["HEMRA_HOME"]) / "cache" / "swebench").exists() or not any(
        p.name.startswith(".making-") for p in (Path(hemra_env["HEMRA_HOME"]) / "cache" / "swebench").iterdir()
    )


def test_a_changed_file_is_refused_against_its_pinned_digest(hemra_env, instances, tmp_path):
    copy = tmp_path / "instances.jsonl"
    copy.write_bytes(instances.read_bytes())
    pinned = json.loads(hemra(hemra_env, "datasets", "pin", f"swebench:{copy}", "--json").stdout)
    prefix = pinned["digest"].removeprefix("sha256:")[:12]
    copy.write_text(copy.read_text().replace("it must add", "it must add up"))
    result = hemra(hemra_env, "run", "-H", "oracle", "-d", f"swebench:{copy}@{prefix}", "--sandbox", "docker")
    assert result.returncode == 2 and "its tasks changed" in result.stderr, result.stderr
    assert hashlib.sha256(copy.read_bytes()).hexdigest() not in pinned["digest"]


def test_a_swebench_harness_run_of_the_same_instance_pairs_with_hemras(hemra_env, instances, tmp_path):
    """The harness's run of the instance, imported with --tasks naming the tasks HEMRA made of
    the same instances, pairs with HEMRA's run task by task; without --tasks it does not."""
    from tests.importer.swebench_fixture import write_run

    result = hemra(
        hemra_env, "run", "-H", "oracle", "-d", f"swebench:{instances}", "-t", f"swebench/{IID}",
        "--sandbox", "docker", "--label", "hemra-oracle", timeout=600,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    [tasks] = list((Path(hemra_env["HEMRA_HOME"]) / "cache" / "swebench").iterdir())
    harness_run = write_run(tmp_path / "swe", resolved=(IID,), unresolved=(), empty=(), errors=(), infra=())
    imported = hemra(hemra_env, "import", str(harness_run), "--label", "swe-gold", "--tasks", str(tasks))
    assert imported.returncode == 0, imported.stderr
    compared = hemra(hemra_env, "compare", "swe-gold", "hemra-oracle", "--json")
    assert compared.returncode == 0, compared.stderr
    assert json.loads(compared.stdout)["paired_tasks"] == 1, compared.stdout[:3000]
    hemra(hemra_env, "import", str(harness_run), "--label", "swe-unpaired")
    apart = hemra(hemra_env, "compare", "swe-unpaired", "hemra-oracle")
    assert apart.returncode == 2 and "no task in common" in apart.stderr


def test_instances_from_a_hugging_face_dataset_at_a_revision(hemra_env, instances, tmp_path):
    """swebench:ORG/NAME@REVISION: the test split's parquet file from a hub cache laid out as
    huggingface_hub writes it, offline; pinned at the commit the branch names."""
    import pyarrow as pa

    from tests.e2e.test_hf_datasets import COMMIT, hub_cache

    rows = [json.loads(line) for line in instances.read_text().splitlines()]
    hub_cache(tmp_path / "hub", pa.Table.from_pylist(rows))
    env = {**hemra_env, "HF_HUB_CACHE": str(tmp_path / "hub"), "HF_HUB_OFFLINE": "1"}
    pinned = hemra(env, "datasets", "pin", "swebench:acme/tiny@main", "--json")
    assert pinned.returncode == 0, pinned.stderr
    pinned = json.loads(pinned.stdout)
    assert sorted(t["task_name"] for t in pinned["tasks"]) == [f"swebench/{IID}", f"swebench/{BROKEN_IID}"]
    assert {t["origin"] for t in pinned["tasks"]} == {f"swebench:acme/tiny@{COMMIT}"}
    missing = hemra(env, "datasets", "pin", "swebench:acme/other@main")
    assert missing.returncode == 2 and "swebench:acme/other@main" in missing.stderr
