"""Loose attempts: `hemra try -H <harness> -t <task folder>` runs one attempt outside any run,
to debug a harness or a task. Recorded, listed as loose, shown and exported; never in a report
or a compare."""

from tests.e2e.helpers import BUNDLED, hemra, runs, show


def test_try__one_attempt_recorded_listed_shown_exported_never_reported(hemra_env, tmp_path):
    tried = hemra(hemra_env, "try", "-H", "oracle", "-t", str(BUNDLED / "reverse-lines"))
    assert tried.returncode == 0, tried.stderr + tried.stdout
    assert "loose attempt r-" in tried.stdout and "hemra/reverse-lines with oracle: passed" in tried.stdout
    [listed] = runs(hemra_env)
    assert listed["kind"] == "loose" and listed["label"].startswith("oracle_reverse-lines_"), listed
    table = hemra(hemra_env, "runs")
    assert "loose attempts" in table.stdout and " loose " in table.stdout, table.stdout
    data = show(hemra_env, listed["id"])
    [attempt] = data["attempts"]
    assert data["report"] is None and attempt["verdict"] == "passed" and attempt["score"]["rewards"] == {"reward": 1.0}
    assert f"hemra show {attempt['id']} --events" in tried.stdout
    assert show(hemra_env, attempt["id"], "--events")["events"]
    # Never in a report or a compare: one line, exit 2.
    for args in (("show", listed["id"], "--report"), ("compare", listed["id"]), ("compare", listed["id"], "x")):
        refused = hemra(hemra_env, *args)
        assert refused.returncode == 2 and "is a loose attempt (hemra try)" in refused.stderr, (args, refused.stderr)
    # Exported and restored elsewhere, it stays a loose attempt.
    assert hemra(hemra_env, "export", listed["id"], "--out", str(tmp_path / "out")).returncode == 0
    elsewhere = {**hemra_env, "HEMRA_HOME": str(tmp_path / "elsewhere")}
    restored = hemra(elsewhere, "import", str(tmp_path / "out"))
    assert restored.returncode == 0, restored.stderr
    [copy] = runs(elsewhere)
    assert copy["kind"] == "loose" and copy["provenance"]["original_id"] == listed["id"]
    assert hemra(elsewhere, "show", copy["id"], "--report").returncode == 2


def test_try__one_harness_on_one_task_else_refused(hemra_env):
    dataset = hemra(hemra_env, "try", "-H", "oracle", "-t", str(BUNDLED))
    assert dataset.returncode == 2 and "no task.toml in that folder" in dataset.stderr, dataset.stderr
    assert runs(hemra_env) == []
