"""Restoring crafted exports into the store, on SQLite and PostgreSQL: every row checked, every
task and harness record recomputed from what its digest covers, nothing recorded on refusal;
and a run's own tasks and harnesses win over anything stored under their digests."""

import copy

import pytest

from hemra.services import digests
from hemra.services.common.errors import FailedPrecondition, InvalidArgument
from hemra.services.domain import harnesses as hs
from hemra.services.domain.harnesses import harness_to_proto
from hemra.services.domain.ids import kind_of, new_id
from hemra.services.domain.tasks import load_task, task_to_proto
from hemra.services.store import convert, exporting, records, sqlrows
from hemra.services.store.service import Store
from tests.conftest import REPO
from tests.store.test_queue import FakeClock

TASK_DIR = REPO / "examples" / "hemra-offline" / "text-stats"
ALWAYS_PASS = b"#!/bin/sh\necho 1 > /logs/verifier/reward.txt\n"
#: When the crafted export's run was made: before the store's clock (FakeClock), after 2000.
T0 = 1_700_000_000.0


@pytest.fixture
async def store(database_url, tmp_path):
    store = await Store.open(database_url, tmp_path / "blobs", FakeClock())
    yield store
    await store.close()


async def _real_task(store) -> dict:
    loaded = load_task(TASK_DIR)
    await store.put_blobs([(f.digest, f.data) for f in loaded.files] + [(digests.sha256(ALWAYS_PASS), ALWAYS_PASS)])
    return dict(digest=loaded.digest, task_name=loaded.task_name, record=convert.to_dict(task_to_proto(loaded)))


def _nop(model: str = "") -> dict:
    harness = harness_to_proto(hs.builtin("nop"), model)
    return dict(digest=harness.digest, harness_name="nop", record=convert.to_dict(harness))


def _manifest(task: dict, harness: dict) -> dict:
    """A one-trial run's rows, as export_rows writes them."""
    run_id, cell_id, trial_id, attempt_id = (new_id(k) for k in ("run", "cell", "trial", "attempt"))
    dataset = dict(
        digest="sha256:" + "d" * 64, dataset_name="ds", source="/x", task_digests=[task["digest"]], create_time=0.0
    )
    return {
        "format": "hemra-export",
        "version": 1,
        "runs": [
            dict(
                id=run_id,
                label="theirs",
                create_time=T0,
                spec={"label": "theirs"},
                concurrency=1,
                max_infra_retries=0,
                cancel_requested=False,
                leased=0,
                limited=False,
                kind="run",
                import_format="",
                source="",
                tree=None,
            )
        ],
        "cells": [
            dict(
                id=cell_id,
                run_id=run_id,
                position=0,
                dataset_digest=dataset["digest"],
                dataset_name="ds",
                harness_digest=harness["digest"],
                harness_name=harness["harness_name"],
                model="",
            )
        ],
        "trials": [
            dict(
                id=trial_id,
                run_id=run_id,
                cell_id=cell_id,
                task_digest=task["digest"],
                task_name=task["task_name"],
                repetition=1,
            )
        ],
        "attempts": [
            dict(
                id=attempt_id,
                run_id=run_id,
                trial_id=trial_id,
                number=1,
                state="finished",
                outcome="completed",
                exit_code=0,
                error="",
                create_time=T0,
                start_time=T0 + 1,
                end_time=T0 + 2,
                agent_version="",
                agent_name="",
                score=None,
                artifacts=[],
                event_count=0,
                verdict="errored",
                released=False,
            )
        ],
        "tasks": [task],
        "datasets": [dataset],
        "harnesses": [harness],
    }


async def _unchanged(store) -> None:
    runs, _ = await store.list_runs(100, "")
    assert runs == []


async def test_restore_of_an_honest_export__accepted_as_an_import_with_its_provenance(store):
    rows = _manifest(await _real_task(store), _nop())
    origin = exporting.Origin(
        label="", imported_by="local user u@h", source="/exports/theirs", export_digest="sha256:" + "e" * 64
    )
    run, _ = await store.restore_run(copy.deepcopy(rows), {}, origin)
    original = rows["runs"][0]["id"]
    assert run.id == "i-" + original[2:] and kind_of(run.id) == "import"
    assert (run.kind, run.import_format, run.label, run.source) == (
        "import",
        "hemra-export 1",
        "theirs",
        "/exports/theirs",
    )
    assert (run.original_id, run.original_kind, run.original_label) == (original, "run", "theirs")
    assert (run.export_digest, run.imported_by, run.import_time) == (
        origin.export_digest,
        "local user u@h",
        store.clock(),
    )
    [listed], _ = await store.list_runs(10, "", kind="import")
    assert listed[0].id == run.id
    assert await store.list_runs(10, "", kind="run") == ([], "")
    report = await store.run_report(run.id)
    assert (report.kind, report.import_format, report.provenance.original_id) == ("import", "hemra-export 1", original)
    assert (await store.get_run(original))[0].id == run.id  # the exported run's ID finds the import it became


async def test_restore__a_label_given_is_the_imports_and_the_exports_is_kept_as_provenance(store):
    rows = _manifest(await _real_task(store), _nop())
    run, _ = await store.restore_run(rows, {}, exporting.Origin(label="mine"))
    assert (run.label, run.original_label) == ("mine", "theirs")
    assert (await store.get_run("mine"))[0].id == run.id


async def test_restore__a_second_restore_of_the_same_export_is_refused(store):
    rows = _manifest(await _real_task(store), _nop())
    run, _ = await store.restore_run(copy.deepcopy(rows), {})
    with pytest.raises(FailedPrecondition, match=f"already in this store \\(as import {run.id}"):
        await store.restore_run(copy.deepcopy(rows), {})


async def test_restore__an_export_of_an_import_keeps_its_format_and_never_becomes_a_run(store):
    rows = _manifest(await _real_task(store), _nop())
    _renamed(rows, "i-" + rows["runs"][0]["id"][2:])
    rows["runs"][0].update(kind="import", import_format="hemra-export 1")
    run, _ = await store.restore_run(copy.deepcopy(rows), {})
    assert (run.id, run.kind, run.original_kind) == (rows["runs"][0]["id"], "import", "import")


async def test_restore__a_verdict_that_disagrees_with_the_rewards_is_decided_again(store):
    rows = _manifest(await _real_task(store), _nop())
    attempt = rows["attempts"][0]
    attempt.update(score={"state": "SCORE_STATE_SCORED", "rewards": {"reward": 1.0}}, verdict="failed")
    run, _ = await store.restore_run(rows, {})
    [stored], _ = await store.list_attempts(run.id, 10, "")
    assert stored.attempt.verdict == "passed"
    progress = (await store.get_run(run.id))[2][0]
    assert (progress["passed"], progress["failed"]) == (1, 0)


def _renamed(rows, run_id: str):
    for name in ("runs", "cells", "trials", "attempts"):
        for row in rows[name]:
            row["id" if name == "runs" else "run_id"] = run_id
    return rows


def _set(table: str, **values):
    def change(rows):
        rows[table][0].update(values)

    return change


def _planted_command(rows):
    rows["harnesses"][0]["record"].update(kind="program", command=["touch", "/tmp/planted"])


def _planted_test(rows):
    files = rows["tasks"][0]["record"]["files"]
    test = next(f for f in files if f["path"] == "tests/test.sh")
    test.update(blobDigest=digests.sha256(ALWAYS_PASS), sizeBytes=str(len(ALWAYS_PASS)))


def _lying_timeout(rows):
    rows["tasks"][0]["record"]["verifierTimeout"] = "99999s"


def _file_less_task(rows):
    rows["tasks"][0]["record"] = {
        "digest": rows["tasks"][0]["digest"],
        "taskName": rows["tasks"][0]["task_name"],
        "instruction": "planted",
    }


def _file_less_task_claiming_a_harbor_digest(rows):
    """A file-less task claiming Harbor's digest of a folder: it would pair with that folder."""
    rows["tasks"][0]["record"] = {
        "digest": rows["tasks"][0]["digest"],
        "taskName": rows["tasks"][0]["task_name"],
        "harborDigest": "sha256:" + "ab" * 32,
    }


def _escaping_file(rows):
    rows["tasks"][0]["record"]["files"][0]["path"] = "../outside"


def _duplicate_attempt(rows):
    rows["attempts"].append(dict(rows["attempts"][0]))


def _attempt_id(value):
    def change(rows):
        rows["attempts"][0]["id"] = value

    return change


def _long_label(rows):
    rows["runs"][0]["label"] = "x" * 400


def _infinite_time(rows):
    rows["attempts"][0]["end_time"] = float("inf")


def _unknown_column(rows):
    rows["cells"][0]["owner"] = "me"


def _not_a_list(rows):
    rows["trials"] = {"a": 1}


def _digest_shape(rows):
    rows["tasks"][0]["record"]["files"][0]["blobDigest"] = "sha256:../../x"


def _misspelt_spec_key(rows):
    rows["runs"][0]["spec"]["concurency"] = 4


def _unknown_score_key(rows):
    rows["attempts"][0]["score"] = {"state": "SCORE_STATE_SCORED", "rewards": {"reward": 1.0}, "grade": "A"}


def _judge_scores(value):
    def change(rows):
        rows["attempts"][0]["judge_scores"] = value

    return change


_JUDGED = {"state": "SCORE_STATE_SCORED", "scorer": "judge:q", "judge": "q", "rewards": {"q": 1.0}}

CRAFTED = {
    "harness command under nop's digest": (_planted_command, "does not hash to its digest"),
    "always-pass test under the real digest": (_planted_test, "do not hash to its digest"),
    "a timeout its task.toml does not say": (_lying_timeout, "verifier_timeout"),
    "a file-less task with an instruction": (_file_less_task, "imported one"),
    "a file-less task claiming a Harbor digest": (_file_less_task_claiming_a_harbor_digest, "Harbor digest"),
    "a task file outside its folder": (_escaping_file, "do not hash to its digest"),
    "a duplicate attempt": (_duplicate_attempt, "appears twice"),
    "an attempt ID that is a path": (_attempt_id("../../x/a-01m8xjg59vwvt8s65g"), "is not a HEMRA attempt ID"),
    "an attempt ID of another kind": (_attempt_id("r-01m8xjg59vwvt8s65g"), "is not a HEMRA attempt ID"),
    "a 400-character label": (_long_label, "more than its 300"),
    "an infinite time": (_infinite_time, "finite"),
    "an unknown column": (_unknown_column, "unknown column"),
    "trials not a list": (_not_a_list, "must be a list"),
    "a blob digest that is a path": (_digest_shape, "digest"),
    "a misspelt run spec key": (_misspelt_spec_key, "concurency"),
    "a score key no score has": (_unknown_score_key, "grade"),
    "judge scores not a list": (_judge_scores({"q": 1}), "judge_scores must be a list"),
    "a judge score of another scorer": (_judge_scores([dict(_JUDGED, scorer="verifier")]), "must name its judge"),
    "a judge score out of range": (_judge_scores([dict(_JUDGED, rewards={"q": 1e300})]), "judge_scores"),
    "a judge call with an unknown key": (
        _judge_scores([dict(_JUDGED, judgeCalls=[{"sample": 0, "prompt": "x"}])]),
        "prompt",
    ),
    "a create time of 1e300": (_set("runs", create_time=1e300), "create_time 1e+300 is not a time HEMRA records"),
    "a create time before 2000": (_set("attempts", create_time=1.0), "create_time 1.0 is not a time HEMRA records"),
    "an end time a year ahead": (_set("attempts", end_time=T0 + 2e8), "end_time"),
    "an unknown state": (_set("attempts", state="pwned"), "state 'pwned' is not one HEMRA knows"),
    "an unknown verdict": (_set("attempts", verdict="pwned"), "verdict 'pwned' is not one HEMRA knows"),
    "an unknown outcome": (_set("attempts", outcome="pwned"), "outcome 'pwned' is not one HEMRA knows"),
    "a finished attempt without an outcome": (_set("attempts", outcome=None), "needs an outcome"),
    "an unknown run kind": (_set("runs", kind="executed"), "has kind 'executed'"),
    "an import ID claiming to be a run": (
        lambda rows: _renamed(rows, "i-" + rows["runs"][0]["id"][2:]),
        "has kind 'run'",
    ),
    "an attempt number of 0": (_set("attempts", number=0), "number is 0, below 1"),
    "a repetition of -1": (_set("trials", repetition=-1), "repetition is -1, below 1"),
    "a concurrency of 0": (_set("runs", concurrency=0), "concurrency is 0, outside 1 to 1,000"),
    "a judge call blob digest that is a path": (
        _judge_scores([dict(_JUDGED, judgeCalls=[{"requestBlobDigest": "sha256:../../x"}])]),
        "digest",
    ),
}


@pytest.mark.parametrize("case", list(CRAFTED))
async def test_restore_of_a_crafted_export__refused_with_nothing_recorded(case, store):
    rows = _manifest(await _real_task(store), _nop())
    craft, fragment = CRAFTED[case]
    craft(rows)
    with pytest.raises((InvalidArgument, FailedPrecondition)) as refused:
        await store.restore_run(rows, {})
    assert fragment in str(refused.value) and "\n" not in str(refused.value)
    await _unchanged(store)
    assert await store.list_harnesses() == []


async def test_restore__events_of_an_attempt_it_does_not_hold_or_repeated__refused(store):
    rows = _manifest(await _real_task(store), _nop())
    event = dict(seq=1, time=1.0, type="status", name="x", payload="{}", duration=0.0)
    with pytest.raises(InvalidArgument, match="does not hold"):
        await store.restore_run(copy.deepcopy(rows), {"../../x": [event]})
    with pytest.raises(InvalidArgument, match="repeated"):
        await store.restore_run(copy.deepcopy(rows), {rows["attempts"][0]["id"]: [event, event]})
    with pytest.raises(InvalidArgument, match="more than its 40"):
        await store.restore_run(copy.deepcopy(rows), {rows["attempts"][0]["id"]: [dict(event, type="t" * 41)]})
    with pytest.raises(InvalidArgument, match="event 1: time 1e\\+300 is not a time"):
        await store.restore_run(copy.deepcopy(rows), {rows["attempts"][0]["id"]: [dict(event, time=1e300)]})
    with pytest.raises(InvalidArgument, match="event 1: duration 1e\\+300 is out of range"):
        await store.restore_run(rows, {rows["attempts"][0]["id"]: [dict(event, duration=1e300)]})
    await _unchanged(store)


async def test_run__records_what_its_planner_read_over_a_planted_record(store):
    """Records planted under real digests (as unverified restores left them) lose to the run's own."""
    task, nop = await _real_task(store), _nop()
    planted_task, planted_nop = copy.deepcopy(task), copy.deepcopy(nop)
    _planted_test({"tasks": [planted_task]})
    planted_nop["record"].update(kind="program", command=["touch", "/tmp/planted"])
    async with store.sessions.begin() as session:
        from hemra.services.store import tables as t

        await sqlrows.insert_ignore(session, t.Task.__table__, [planted_task])
        await sqlrows.insert_ignore(session, t.Harness.__table__, [planted_nop])
        await sqlrows.insert_ignore(
            session,
            t.Dataset.__table__,
            [
                dict(
                    digest="sha256:" + "d" * 64,
                    dataset_name="ds",
                    source="/planted",
                    task_digests=["sha256:" + "e" * 64],
                    create_time=0.0,
                )
            ],
        )
    plan = records.PlannedRun(
        label="mine",
        spec={"label": "mine"},
        concurrency=1,
        max_infra_retries=0,
        datasets=[
            dict(
                digest="sha256:" + "d" * 64,
                dataset_name="ds",
                source="/x",
                task_digests=[task["digest"]],
                create_time=0.0,
            )
        ],
        tasks=[task],
        harnesses=[_nop("model-b")],
        cells=[("sha256:" + "d" * 64, "ds", nop["digest"], "nop", "model-b")],
        trials=[(0, task["digest"], task["task_name"], 1, None)],
    )
    await store.record_run(plan)
    claimed = await store.claim_job("w1", 30)
    assert claimed.task.record == task["record"]
    assert claimed.harness.record["kind"] == "builtin" and "command" not in claimed.harness.record
    assert claimed.harness.record["model"] == "model-b"
    [dataset] = await store.list_datasets()
    assert dataset.tasks == 1
    async with store.sessions() as session:
        assert (await session.get(t.Dataset, "sha256:" + "d" * 64)).task_digests == [task["digest"]]


def _mcp_harness(tmp_path) -> dict:
    """A harness file declaring an MCP server: its digest also covers the config its agent is handed."""
    path = tmp_path / "cc.toml"
    path.write_text(
        'kind = "cli"\nagent = "claude-code"\n[[mcp_server]]\nname = "notes"\ncommand = "python3"\nargs = ["s.py"]\n'
    )
    harness = harness_to_proto(hs.load(path), "")
    return dict(digest=harness.digest, harness_name="cc", record=convert.to_dict(harness))


async def test_restore__a_harness_with_mcp_servers_is_recomputed_with_them(store, tmp_path):
    honest = _mcp_harness(tmp_path)
    assert honest["digest"] != digests.sha256(honest["record"]["sourceText"].encode())
    run, _ = await store.restore_run(_manifest(await _real_task(store), honest), {})
    assert run.kind == "import"


async def test_restore__a_harness_whose_mcp_servers_changed_under_its_digest__refused(store, tmp_path):
    planted = _mcp_harness(tmp_path)
    planted["record"]["sourceText"] = planted["record"]["sourceText"].replace('"s.py"', '"evil.py"')
    with pytest.raises(InvalidArgument, match="does not hash to its digest"):
        await store.restore_run(_manifest(await _real_task(store), planted), {})
    await _unchanged(store)
