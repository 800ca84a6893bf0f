"""Which task is which across two sides: Harbor's digest pairs a task imported without its
folder with the folder of that digest; a name under two digests is one entry, worded by what
is known of the two definitions. (End to end: tests/importer/test_imports.py.)"""

from collections import defaultdict
from types import SimpleNamespace

from hemra.services.store import compare
from hemra.services.store.report import TrialResult


def side(ref: str, tasks: dict[str, tuple[str, str]]) -> compare.Side:
    """tasks: digest -> (task name, scorer fingerprint), one passed trial each."""
    run = SimpleNamespace(id=f"r-{ref}", label=ref, kind="run")
    result = compare.Side(
        ref, run, [SimpleNamespace(dataset_name="ds", harness_name=ref, model="m")], defaultdict(list)
    )
    for digest, (name, fingerprint) in tasks.items():
        score = {"state": "SCORE_STATE_SCORED", "rewards": {"reward": 1}, "scorerFingerprint": fingerprint}
        result.trials[digest].append(TrialResult(digest, name, "finished", "completed", score))
    return result


def test_a_task_known_by_harbors_digest_pairs_with_that_folder_under_its_scorer():
    a = side("a", {"sha256:common": ("t/common", "f0"), "sha256:pinned": ("t/x", "f-tests")})
    b = side("b", {"sha256:common": ("t/common", "f0"), "sha256:imported": ("t/x", "f-checksum")})
    identities = {
        "sha256:pinned": compare.TaskIdentity("sha256:harbor-x", True),
        "sha256:imported": compare.TaskIdentity("sha256:harbor-x", False),
    }
    result = compare.compare(a, b, tasks=identities)
    assert sorted(t.task_digest for t in result.tasks) == ["sha256:common", "sha256:pinned"]
    assert result.not_comparable == []
    # Another Harbor digest: not the same task.
    b = side("b", {"sha256:common": ("t/common", "f0"), "sha256:imported": ("t/x", "f-checksum")})
    identities["sha256:imported"] = compare.TaskIdentity("sha256:harbor-y", False)
    [entry] = compare.compare(a, b, tasks=identities).not_comparable
    assert entry.reason == "task definitions differ (a sha256:pinned, b sha256:imported)"


def test_a_name_under_two_digests_is_one_entry_worded_by_what_is_known():
    a = side("a", {"sha256:common": ("t/common", "f0"), "sha256:old": ("t/x", "f1")})
    b = side("b", {"sha256:common": ("t/common", "f0"), "sha256:new": ("t/x", "f2")})
    [entry] = compare.compare(a, b).not_comparable
    assert (entry.task_name, entry.a_task_digest, entry.b_task_digest) == ("t/x", "sha256:old", "sha256:new")
    assert entry.reason.startswith("task definitions differ")
    unknown = {"sha256:new": compare.TaskIdentity("", False)}  # an import with neither files nor Harbor's digest
    b = side("b", {"sha256:common": ("t/common", "f0"), "sha256:new": ("t/x", "f2")})
    [entry] = compare.compare(a, b, tasks=unknown).not_comparable
    assert entry.reason == "task definitions cannot be matched (a sha256:old, b sha256:new)"
