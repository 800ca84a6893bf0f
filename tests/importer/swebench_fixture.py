"""Builds SWE-bench harness run folders (4.x and 5.x shapes) for tests, as the harness writes them."""

import json
from pathlib import Path

MODEL, RUN_ID, DATASET = "acme/agent-y", "nightly", "SWE-bench/SWE-bench_Lite"


def write_run(
    root: Path,
    version: str = "5.0.2",
    resolved=("a__a-1", "b__b-2"),
    unresolved=("c__c-3",),
    empty=("d__d-4",),
    errors=("e__e-5",),
    infra=("f__f-6",),
) -> Path:
    """A run of six instances: resolved, unresolved, empty patch, could-not-grade error and
    (5.x) an environment failure. Returns the folder."""
    five = version.startswith("5.")
    model_dir = MODEL.replace("/", "__")
    logs = root / "logs" / "run_evaluation" / RUN_ID / model_dir
    submitted = sorted([*resolved, *unresolved, *empty, *errors, *infra])
    unresolved_all = sorted([*unresolved, *(infra if five else ())])
    error_all = sorted([*errors, *(() if five else infra)])
    for iid in submitted:
        folder = logs / iid
        if iid in empty:
            continue
        folder.mkdir(parents=True)
        (folder / "run_instance.log").write_text(f"2026-11-30 10:00:00,000 - INFO - Running {iid}\n")
        (folder / "patch.diff").write_text("diff --git a/x b/x\n")
        (folder / "test_output.txt").write_text(
            ">>>>> Start Test Output\nok\n>>>>> End Test Output\n"
            if iid not in infra
            else "Cannot allocate memory\nKilled\n"
        )
        if iid in error_all:
            continue
        report = {
            "patch_is_None": False,
            "patch_exists": True,
            "patch_successfully_applied": True,
            "resolved": iid in resolved,
        }
        if five:
            report["infra_failure"] = iid in infra
        (folder / "report.json").write_text(json.dumps({iid: report}, indent=4))
    summary = {
        "total_instances": len(submitted),
        "submitted_instances": len(submitted),
        "completed_instances": len(submitted) - len(empty) - len(error_all),
        "resolved_instances": len(resolved),
        "unresolved_instances": len(unresolved_all),
    }
    if five:
        summary.update(infra_failure_instances=len(infra), ambiguous_failure_instances=0)
    summary.update(
        empty_patch_instances=len(empty),
        error_instances=len(error_all),
        completed_ids=sorted(set(submitted) - set(empty) - set(error_all)),
        incomplete_ids=[],
        empty_patch_ids=sorted(empty),
        submitted_ids=submitted,
        resolved_ids=sorted(resolved),
        unresolved_ids=unresolved_all,
    )
    if five:
        summary.update(
            infra_failure_ids=sorted(infra),
            ambiguous_failure_ids=[],
            failure_reasons={iid: "out_of_memory" for iid in infra},
        )
    summary.update(error_ids=error_all, schema_version=2)
    if five:
        summary.update(unstopped_instances=0, unstopped_containers=[], unremoved_images=[])
        run_json = root / "logs" / "run_evaluation" / RUN_ID / "run.json"
        run_json.write_text(
            json.dumps(
                {"dataset": DATASET, "split": "test", "task_repo": None, "created_at": "2026-11-30T10:00:00+00:00"},
                indent=2,
            )
            + "\n"
        )
    (root / f"{model_dir}.{RUN_ID}.json").write_text(json.dumps(summary, indent=4) + "\n")
    (root / "predictions.jsonl").write_text(
        "".join(
            json.dumps({"instance_id": iid, "model_name_or_path": MODEL, "model_patch": "" if iid in empty else "diff"})
            + "\n"
            for iid in submitted
        )
    )
    return root
