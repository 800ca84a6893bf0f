"""Imports end to end: real Harbor 0.25 jobs, a 0.13-era job, SWE-bench 4.x and 5.x runs,
HEMRA exports; byte-for-byte copies; pairing with HEMRA's own runs; bad input."""

import filecmp
import json
import os
import shutil
import tarfile
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.e2e.helpers import hemra, runs, show
from tests.importer.swebench_fixture import write_run

pytestmark = pytest.mark.slow
FIXTURES = REPO / "tests" / "fixtures" / "harbor"
TASKS = FIXTURES / "tasks"


def unpack(name: str, into: Path) -> Path:
    with tarfile.open(FIXTURES / name) as archive:
        archive.extractall(into, filter="tar")
        [top] = {m.name.split("/")[0] for m in archive.getmembers()}
    return into / top


def same_tree(a: Path, b: Path) -> None:
    """Every file and folder (empty ones too), bytes and executable bits equal."""

    def listing(root):
        return sorted(
            (p.relative_to(root).as_posix(), p.is_dir(), p.is_file() and os.access(p, os.X_OK)) for p in root.rglob("*")
        )

    assert listing(a) == listing(b)
    for path in a.rglob("*"):
        if path.is_file():
            assert filecmp.cmp(path, b / path.relative_to(a), shallow=False), path


def _tables(report: str) -> str:
    """A report's text from its first dataset table on (its header names the run or import)."""
    return report[report.index("dataset ") :]


def attempts(env, ref):
    return sorted(show(env, ref)["attempts"], key=lambda a: a["task_name"])


def test_harbor_025__oracle_import_pairs_with_a_hemra_run(hemra_env, tmp_path):
    job = unpack("harbor-0.25-oracle.tar", tmp_path)
    result = hemra(hemra_env, "import", str(job), "--label", "harbor-oracle", "--tasks", str(TASKS))
    assert result.returncode == 0, result.stderr
    assert "harbor 0.25" in result.stdout
    imported = attempts(hemra_env, "harbor-oracle")
    assert [a["task_name"] for a in imported] == ["hemra/fix-median", "hemra/json-transform", "hemra/text-stats"]
    assert {a["harness_name"] for a in imported} == {"oracle"}
    assert {a["agent_version"] for a in imported} == {"1.0.0"}
    assert imported[1]["score"]["rewards"] == {"reward": 1.0, "format_ok": 1.0}
    run = hemra(hemra_env, "run", "-H", "nop", "-H", "oracle", "-d", str(TASKS), "--label", "mine")
    assert run.returncode == 0, run.stderr
    digests = {a["task_digest"] for a in imported}
    assert digests == {a["task_digest"] for a in show(hemra_env, "mine")["attempts"]}
    compared = json.loads(hemra(hemra_env, "compare", "harbor-oracle", "mine/oracle", "--json").stdout)
    assert compared["paired_tasks"] == 3 and compared["not_comparable"] == []
    assert compared["delta"] == 0 and compared["a_passed"] == compared["b_passed"] == 2
    against_nop = json.loads(hemra(hemra_env, "compare", "harbor-oracle", "mine/nop", "--json").stdout)
    assert against_nop["delta"] == -1.0 and sorted(against_nop["flipped_to_fail"]) == [
        "hemra/fix-median",
        "hemra/text-stats",
    ]


def test_harbor_025__agent_timeout_is_a_result_scored_anyway(hemra_env, tmp_path):
    job = unpack("harbor-0.25-oracle-agent-timeout.tar", tmp_path)
    assert hemra(hemra_env, "import", str(job), "--label", "slow").returncode == 0
    [attempt] = attempts(hemra_env, "slow")
    assert attempt["outcome"] == "OUTCOME_TIMED_OUT" and "AgentTimeoutError" in attempt["error"]
    assert attempt["score"]["rewards"] == {"reward": 0.0}


def test_harbor_013__shape_classifies_results_and_infrastructure(hemra_env, tmp_path):
    job = unpack("harbor-0.13-style.tar", tmp_path)
    result = hemra(hemra_env, "import", str(job), "--label", "old")
    assert result.returncode == 0, result.stderr and "harbor 0.13" in result.stdout
    by_task = {a["task_name"].split("/")[-1]: a for a in attempts(hemra_env, "old")}
    assert by_task["json-transform"]["outcome"] == "OUTCOME_HARNESS_FAILED"
    assert by_task["json-transform"]["score"]["rewards"] == {"reward": 0.8, "format_ok": 1.0}
    assert by_task["fix-median"]["outcome"] == "OUTCOME_INFRA_FAILED"
    assert "EnvironmentStartTimeoutError" in by_task["fix-median"]["error"]
    assert "score" not in by_task["fix-median"]
    assert by_task["text-stats"]["outcome"] == "OUTCOME_COMPLETED"
    row = show(hemra_env, "old")["report"]["datasets"][0]["rows"][0]
    assert row["infra_failed"] == 1 and row["harness_failed"] == 1


def test_import__keeps_every_file_byte_for_byte_and_export_reimports_identically(hemra_env, tmp_path):
    job = unpack("harbor-0.25-nop.tar", tmp_path / "jobs")
    assert any(p.is_dir() and not any(p.iterdir()) for p in job.rglob("*")), "fixture has empty folders"
    assert hemra(hemra_env, "import", str(job), "--label", "nop-job", "--tasks", str(TASKS)).returncode == 0
    assert hemra(hemra_env, "run", "-H", "oracle", "-d", str(TASKS), "--label", "ours").returncode == 0
    out = tmp_path / "export"
    exported = hemra(hemra_env, "export", "nop-job", "--out", str(out))
    assert exported.returncode == 0, exported.stderr
    same_tree(job, out / "source")
    plain = [p for p in (out / "source").rglob("*") if p.is_file() and not os.access(p, os.X_OK)]
    assert plain and all(p.stat().st_nlink >= 2 for p in plain), "a plain file is a link to its blob, not a copy"
    blobs = {p.stat().st_ino for p in (out / "blobs").rglob("*") if p.is_file()}
    assert {p.stat().st_ino for p in plain} <= blobs
    assert hemra(hemra_env, "export", "ours", "--out", str(tmp_path / "export-run")).returncode == 0
    fresh = dict(hemra_env, HEMRA_HOME=str(tmp_path / "fresh"))
    for folder in (out, tmp_path / "export-run"):
        result = hemra(fresh, "import", str(folder))
        assert result.returncode == 0, result.stderr
    for ref in ("nop-job", "ours"):  # the same tables; the header says where the import came from
        restored, original = (hemra(env, "show", ref, "--report").stdout for env in (fresh, hemra_env))
        assert _tables(restored) == _tables(original)
        assert restored.startswith(f"import i-{show(hemra_env, ref)['run']['id'][2:]} ({ref})")
    # "ours" was a run HEMRA executed: in the fresh store it is an import, whatever its export said.
    assert (show(fresh, "ours")["run"]["kind"], show(fresh, "ours")["run"]["provenance"]["original_kind"]) == (
        "import",
        "run",
    )
    ours = show(hemra_env, "ours")["run"]["id"]
    before = json.loads(hemra(hemra_env, "compare", "nop-job", "ours", "--json").stdout)
    after = hemra(fresh, "compare", "nop-job", "ours", "--json").stdout
    after = json.loads(after.replace(f"i-{ours[2:]}", ours))  # the same compare, of the import "ours" became
    assert (before["b"].pop("kind"), after["b"].pop("kind")) == ("run", "import")
    assert after == before
    again = hemra(fresh, "import", str(out))
    assert again.returncode == 2 and "already in this store" in again.stderr
    attempt = show(fresh, "ours")["attempts"][0]
    events = show(fresh, attempt["id"], "--events")["events"]
    assert events == show(hemra_env, attempt["id"], "--events")["events"]


def test_import_of_an_export__a_tree_path_leading_out_of_the_folder_is_refused(hemra_env, tmp_path):
    job = unpack("harbor-0.25-nop.tar", tmp_path / "jobs")
    assert hemra(hemra_env, "import", str(job), "--label", "nop-job").returncode == 0
    out = tmp_path / "export"
    assert hemra(hemra_env, "export", "nop-job", "--out", str(out)).returncode == 0
    manifest = json.loads((out / "hemra-export.json").read_text())
    entry = next(e for e in manifest["runs"][0]["tree"] if not e.get("isDir"))
    entry["path"] = "../../outside.txt"  # a later export would write there
    (out / "hemra-export.json").write_text(json.dumps(manifest))
    fresh = dict(hemra_env, HEMRA_HOME=str(tmp_path / "fresh"))
    result = hemra(fresh, "import", str(out))
    assert result.returncode == 2
    [line] = result.stderr.strip().splitlines()
    assert "'../../outside.txt' is not a relative path inside the folder" in line
    assert runs(fresh) == []


@pytest.mark.parametrize("version", ["5.0.2", "4.1.0"])
def test_swebench__only_resolved_pass_environment_and_errors_are_infra(hemra_env, tmp_path, version):
    folder = write_run(tmp_path / "run", version)
    result = hemra(hemra_env, "import", str(folder), "--swebench-version", version, "--label", "agent-y")
    assert result.returncode == 0, result.stderr
    by_id = {a["task_name"]: a for a in attempts(hemra_env, "agent-y")}
    assert by_id["a__a-1"]["score"]["rewards"] == {"resolved": 1.0}
    assert by_id["c__c-3"]["score"]["rewards"] == {"resolved": 0.0}
    assert by_id["d__d-4"]["score"]["rewards"] == {"resolved": 0.0}  # empty patch: submitted, failed
    assert by_id["e__e-5"]["outcome"] == "OUTCOME_INFRA_FAILED"
    assert by_id["f__f-6"]["outcome"] == "OUTCOME_INFRA_FAILED"
    row = show(hemra_env, "agent-y")["report"]["datasets"][0]["rows"][0]
    assert (row["passed"], row["binary_graded"], row["infra_failed"]) == (2, 4, 2)
    out = tmp_path / "export"
    assert hemra(hemra_env, "export", "agent-y", "--out", str(out)).returncode == 0
    same_tree(folder, out / "source")


def test_swebench__two_runs_compare(hemra_env, tmp_path):
    write_run(tmp_path / "a")
    write_run(tmp_path / "b", resolved=("a__a-1", "c__c-3"), unresolved=("b__b-2",))
    assert (
        hemra(hemra_env, "import", str(tmp_path / "a"), "--swebench-version", "5.0.2", "--label", "a").returncode == 0
    )
    assert (
        hemra(hemra_env, "import", str(tmp_path / "b"), "--swebench-version", "5.0.2", "--label", "b").returncode == 0
    )
    data = json.loads(hemra(hemra_env, "compare", "a", "b", "--json").stdout)
    assert data["flipped_to_pass"] == ["c__c-3"] and data["flipped_to_fail"] == ["b__b-2"]
    assert data["binary_tasks"] == 4 and data["a"]["infra_failed"] == 2
    assert {x["task_name"] for x in data["not_comparable"]} == {"e__e-5", "f__f-6"}


def _truncate(job: Path) -> None:
    trial = next(p for p in sorted(job.iterdir()) if p.is_dir())
    data = (trial / "result.json").read_bytes()
    (trial / "result.json").write_bytes(data[: len(data) // 2])


BAD = {
    "neither format": (lambda tmp: (tmp / "x").mkdir() or [str(tmp / "x")], ["neither a Harbor job"]),
    "truncated trial result.json": (
        lambda tmp: (
            _truncate(unpack("harbor-0.25-nop.tar", tmp)) or [str(next(p for p in tmp.iterdir() if p.is_dir()))]
        ),
        ["result.json", "truncated or not JSON"],
    ),
    "missing job result.json": (
        lambda tmp: (
            (unpack("harbor-0.25-nop.tar", tmp) / "result.json").unlink()
            or [str(next(p for p in tmp.iterdir() if p.is_dir()))]
        ),
        ["neither a Harbor job"],
    ),
    "missing trial result.json": (
        lambda tmp: (
            _drop_trial_result(unpack("harbor-0.25-nop.tar", tmp))
            or [str(next(p for p in tmp.iterdir() if p.is_dir()))]
        ),
        ["result.json: missing"],
    ),
    "truncated job result.json": (
        lambda tmp: (
            _truncate_job(unpack("harbor-0.25-nop.tar", tmp)) or [str(next(p for p in tmp.iterdir() if p.is_dir()))]
        ),
        ["result.json", "truncated or not JSON"],
    ),
    "unknown swebench version": (
        lambda tmp: [str(write_run(tmp / "r")), "--swebench-version", "9.9"],
        ["--swebench-version 9.9: unknown"],
    ),
    "summary that does not match its logs": (
        lambda tmp: [str(_lie(write_run(tmp / "r"))), "--swebench-version", "5.0.2"],
        ["resolved_ids lists c__c-3", "does not say resolved"],
    ),
}


def _drop_trial_result(job: Path) -> None:
    trial = next(p for p in sorted(job.iterdir()) if p.is_dir())
    (trial / "result.json").unlink()


def _truncate_job(job: Path) -> None:
    data = (job / "result.json").read_bytes()
    (job / "result.json").write_bytes(data[: len(data) // 3])


def _lie(folder: Path) -> Path:
    summary = next(folder.glob("*.json"))
    data = json.loads(summary.read_text())
    data["resolved_ids"].append("c__c-3")
    summary.write_text(json.dumps(data, indent=4) + "\n")
    return folder


@pytest.mark.parametrize("case", list(BAD))
def test_import_bad_input__one_line_exit_2_store_unchanged(case, hemra_env, tmp_path):
    make, fragments = BAD[case]
    result = hemra(hemra_env, "import", *make(tmp_path))
    assert result.returncode == 2, result.stdout + result.stderr
    [line] = result.stderr.strip().splitlines()
    for fragment in fragments:
        assert fragment in line
    assert runs(hemra_env) == []


def test_export__refuses_a_non_empty_target_and_compare_needs_common_tasks(hemra_env, tmp_path):
    write_run(tmp_path / "a")
    assert hemra(hemra_env, "import", str(tmp_path / "a"), "--label", "a").returncode == 0
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "keep").write_text("mine")
    result = hemra(hemra_env, "export", "a", "--out", str(tmp_path / "out"))
    assert result.returncode == 2 and "not an empty folder" in result.stderr
    assert (tmp_path / "out" / "keep").read_text() == "mine"
    assert (
        hemra(hemra_env, "run", "-H", "nop", "-d", "hemra-offline", "-t", "hemra/text-stats", "--label", "r").returncode
        == 0
    )
    result = hemra(hemra_env, "compare", "a", "r")
    assert result.returncode == 2 and "no task in common" in result.stderr


def test_harbor_imports_with_and_without_the_task_folders_pair_on_harbors_digest(hemra_env, tmp_path):
    """One import pins the folders (HEMRA's task digest), the other cannot (Harbor's lock.json
    digest only): Harbor's digest, kept beside HEMRA's, proves they ran the same folders."""
    bare = unpack("harbor-0.25-nop.tar", tmp_path / "bare")
    pinned = unpack("harbor-0.25-oracle.tar", tmp_path / "pinned")
    assert hemra(hemra_env, "import", str(bare), "--label", "bare").returncode == 0  # first: nothing to pair with yet
    assert hemra(hemra_env, "import", str(pinned), "--label", "pinned", "--tasks", str(TASKS)).returncode == 0
    digests = {a["task_digest"] for a in attempts(hemra_env, "pinned")}
    assert not digests & {a["task_digest"] for a in attempts(hemra_env, "bare")}  # two identities of each task
    for a, b in (("pinned", "bare"), ("bare", "pinned")):
        compared = json.loads(hemra(hemra_env, "compare", a, b, "--json").stdout)
        assert compared["paired_tasks"] == 3 and compared["not_comparable"] == [], compared
        assert {t["task_digest"] for t in compared["tasks"]} == digests  # under HEMRA's digests
    compared = json.loads(hemra(hemra_env, "compare", "pinned", "bare", "--json").stdout)
    assert sorted(compared["flipped_to_fail"]) == ["hemra/fix-median", "hemra/text-stats"]
    # HEMRA's own run of those folders pairs with the import that could not pin them.
    assert hemra(hemra_env, "run", "-H", "oracle", "-d", str(TASKS), "--label", "mine").returncode == 0
    compared = json.loads(hemra(hemra_env, "compare", "bare", "mine", "--json").stdout)
    assert compared["paired_tasks"] == 3 and sorted(compared["flipped_to_pass"]) == [
        "hemra/fix-median",
        "hemra/text-stats",
    ]


def test_a_task_whose_definition_changed_is_named_so_with_both_digests(hemra_env, tmp_path):
    assert hemra(hemra_env, "run", "-H", "oracle", "-d", str(TASKS), "--label", "before").returncode == 0
    changed = tmp_path / "tasks"
    shutil.copytree(TASKS, changed)
    (changed / "text-stats" / "instruction.md").write_text("Changed.\n")
    assert hemra(hemra_env, "run", "-H", "oracle", "-d", str(changed), "--label", "after").returncode == 0
    old = {a["task_name"]: a["task_digest"] for a in show(hemra_env, "before")["attempts"]}["hemra/text-stats"]
    new = {a["task_name"]: a["task_digest"] for a in show(hemra_env, "after")["attempts"]}["hemra/text-stats"]
    compared = json.loads(hemra(hemra_env, "compare", "before", "after", "--json").stdout)
    assert compared["paired_tasks"] == 2
    [entry] = compared["not_comparable"]  # once, not "not run on side a" and "not run on side b"
    assert entry["task_name"] == "hemra/text-stats" and entry["a_task_digest"] == old and entry["b_task_digest"] == new
    assert entry["reason"] == f"task definitions differ (a {old[:19]}, b {new[:19]})"
    text = hemra(hemra_env, "compare", "before", "after").stdout
    assert "task definitions differ" in text and old[:19] in text and new[:19] in text, text
    assert "not run on side" not in text
