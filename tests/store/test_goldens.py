"""Golden tests: the report and compare output (text and JSON) of a small crafted store that
exercises every flag and every not-comparable reason. HEMRA_UPDATE_GOLDEN=1 rewrites them."""

import json
import os
import re
from pathlib import Path

import msgspec
import pytest
from google.protobuf import json_format
from rich.console import Console

from hemra.clients.cli import comparing, render
from hemra.services.store import convert, records
from hemra.services.store.service import Store
from hemra.v1 import store_service_pb2 as spb

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
_ID = re.compile(r"\b[rctaji]-[0-9a-z]{16}(?:[0-9a-z]{2})?\b")
SCORED, FAILED = "SCORE_STATE_SCORED", "SCORE_STATE_SCORER_FAILED"


class Clock:
    now = 1_800_000_000.0

    def __call__(self):
        return self.now


def _result(
    outcome="completed", rewards=None, fingerprint="sha256:verifier", judge="", version="", state=SCORED, agent=""
):
    score = (
        None
        if outcome in ("infra_failed", "cancelled")
        else {
            "state": state,
            "rewards": rewards or {},
            "scorerFingerprint": fingerprint,
            "scorer": "verifier",
            **({"judgeModel": judge} if judge else {}),
        }
    )
    return dict(
        outcome=outcome,
        error="" if outcome == "completed" else f"{outcome} here",
        score=score,
        agent_version=version,
        agent_name=agent,
        start_time=1_800_000_000.0,
        end_time=1_800_000_010.0,
        artifacts=[],
    )


def crafted_plan() -> records.PlannedRun:
    tasks = {name: f"sha256:{name}" for name in ("alpha", "beta", "gamma", "delta", "eps", "zeta", "eta")}
    harness = lambda name, kind, version, model, agent: dict(  # noqa: E731
        digest=f"sha256:h-{name}",
        harness_name=name,
        record={"harnessName": name, "kind": kind, "agent": agent, "agentVersion": version, "model": model},
    )
    base, other, loose = 0, 1, 2
    trials = [
        # alpha: binary, pairs; baseline passes, other fails (a flip) running another agent than pinned
        (base, tasks["alpha"], "alpha", 1, _result(rewards={"reward": 1}, version="1.0", agent="agent-base")),
        (other, tasks["alpha"], "alpha", 1, _result(rewards={"reward": 0}, version="2.1", agent="impostor")),
        # beta: binary, both pass; other ran twice (k=2)
        (base, tasks["beta"], "beta", 1, _result(rewards={"reward": 1}, version="1.0")),
        (other, tasks["beta"], "beta", 1, _result(rewards={"reward": 1}, version="2.0")),
        (other, tasks["beta"], "beta", 2, _result("timed_out", rewards={"reward": 0}, version="2.0")),
        # gamma: multi-key numeric, pairs on mean reward
        (base, tasks["gamma"], "gamma", 1, _result(rewards={"reward": 0.5, "format_ok": 1.0}, version="1.0")),
        (other, tasks["gamma"], "gamma", 1, _result(rewards={"reward": 0.75, "format_ok": 1.0}, version="2.0")),
        # delta: scorer fingerprints differ
        (base, tasks["delta"], "delta", 1, _result(rewards={"reward": 1}, version="1.0")),
        (other, tasks["delta"], "delta", 1, _result(rewards={"reward": 1}, fingerprint="sha256:v2", version="2.0")),
        # eps: reward names differ
        (base, tasks["eps"], "eps", 1, _result(rewards={"reward": 1}, version="1.0")),
        (other, tasks["eps"], "eps", 1, _result(rewards={"score": 1}, version="2.0")),
        # zeta: judged by different judge models
        (base, tasks["zeta"], "zeta", 1, _result(rewards={"reward": 1}, judge="judge-a", version="1.0")),
        (other, tasks["zeta"], "zeta", 1, _result(rewards={"reward": 1}, judge="judge-b", version="2.0")),
        # eta: nothing graded on the other side; infra, cancelled and unfinished trials counted apart
        (base, tasks["eta"], "eta", 1, _result(rewards={"reward": 0}, version="1.0")),
        (other, tasks["eta"], "eta", 1, _result(state=FAILED, version="2.0")),
        (other, tasks["eta"], "eta", 2, _result("infra_failed")),
        (other, tasks["eta"], "eta", 3, _result("cancelled")),
        (other, tasks["eta"], "eta", 4, None),
        # loose: no agent version pinned; its scorer changed between the two trials of beta
        (loose, tasks["alpha"], "alpha", 1, _result(rewards={"reward": 1}, version="0.9")),
        (loose, tasks["beta"], "beta", 1, _result(rewards={"reward": 1}, version="0.9")),
        (loose, tasks["beta"], "beta", 2, _result(rewards={"reward": 0}, fingerprint="sha256:v2", version="0.9")),
    ]
    return records.PlannedRun(
        label="crafted",
        spec={"label": "crafted", "baseline": "base"},
        concurrency=1,
        max_infra_retries=0,
        datasets=[
            dict(
                digest="sha256:ds",
                dataset_name="crafted-ds",
                source="/crafted",
                task_digests=list(tasks.values()),
                create_time=0.0,
            )
        ],
        tasks=[dict(digest=d, task_name=n, record={"taskName": n}) for n, d in tasks.items()],
        harnesses=[
            harness("base", "program", "1.0", "model-x", "agent-base"),
            harness("other", "program", "2.0", "model-y", "agent-other"),
            harness("loose", "program", "", "model-x", ""),
        ],
        cells=[
            ("sha256:ds", "crafted-ds", "sha256:h-base", "base", "model-x"),
            ("sha256:ds", "crafted-ds", "sha256:h-other", "other", "model-y"),
            ("sha256:ds", "crafted-ds", "sha256:h-loose", "loose", "model-x"),
        ],
        trials=trials,
    )


def masked(text: str) -> str:
    return _ID.sub("<id>", text)


def check(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("HEMRA_UPDATE_GOLDEN"):
        path.write_text(text)
    assert path.exists(), f"{path} missing: run with HEMRA_UPDATE_GOLDEN=1"
    assert text == path.read_text(), f"{name} differs from its golden (HEMRA_UPDATE_GOLDEN=1 rewrites it)"


@pytest.fixture(params=["sqlite", "postgres"])
def database(request, tmp_path) -> str:
    """Each database in turn: the goldens hold for both. (A plain fixture: the PostgreSQL
    fixtures run their own event loop.)"""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'g.db'}"
    return request.getfixturevalue("postgres_url")


@pytest.fixture
async def crafted(database, tmp_path):
    store = await Store.open(database, tmp_path / "blobs", Clock())
    await store.record_run(crafted_plan())
    yield store
    await store.close()


def recording_console() -> Console:
    return Console(record=True, width=140, color_system=None, force_terminal=False)


async def test_golden__report_text_and_json(crafted):
    report = convert.message(await crafted.run_report("crafted"), spb.Report)
    console = recording_console()
    render.print_report(console, report)
    check("report.txt", masked(console.export_text()))
    check(
        "report.json",
        masked(
            json.dumps(json_format.MessageToDict(report, preserving_proto_field_name=True), indent=2, sort_keys=True)
        )
        + "\n",
    )
    flags = " | ".join(f for d in report.datasets for r in d.rows for f in r.flags)
    for expected in (
        "model model-y differs",
        "incomplete",
        "nothing graded",
        "scorers differ",
        "agent version drifted: pinned 2.0, ran 2.1",
        "agent other than the one pinned: pinned agent-other 2.0, ran impostor 2.1 in 1 of 11 trials",
        "agent version not pinned (ran 0.9)",
        "scorer changed between trials on 1 tasks",
    ):
        assert expected in flags
    by_harness = {r.harness_name: list(r.flags) for d in report.datasets for r in d.rows}
    # The crafted run's dataset was never audited for leaks: every row says so, and nothing else on base's.
    assert by_harness["base"] == ["dataset crafted-ds never audited (hemra datasets audit crafted-ds)"]
    data = json.loads((GOLDEN / "report.json").read_text())
    assert [f for r in data["datasets"][0]["rows"] for f in r.get("flags", [])] == [
        f for d in report.datasets for r in d.rows for f in r.flags
    ]


async def test_golden__compare_text_and_json(crafted, monkeypatch):
    result = await crafted.compare("crafted/base", "crafted/other")
    comparison = convert.message(result, spb.Comparison)
    assert comparison == convert.from_dict(msgspec.to_builtins(result, str_keys=True), spb.Comparison())
    full = json_format.MessageToDict(
        comparison, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
    )
    assert render.message_json(comparison, comparing.BULK) == full
    assert json.loads(render.dumps(full)) == full
    console = recording_console()
    monkeypatch.setattr(comparing, "console", console)
    comparing.print_comparison(comparison)
    check("compare.txt", masked(console.export_text()))
    data = json_format.MessageToDict(comparison, preserving_proto_field_name=True)
    check("compare.json", masked(json.dumps(data, indent=2, sort_keys=True)) + "\n")
    reasons = {item.task_name: item.reason for item in comparison.not_comparable}
    assert reasons == {
        "delta": "scorer fingerprints differ (the verifier or the task's tests changed)",
        "eps": "reward names differ (reward vs score)",
        "zeta": "judged by different judge models (judge-a vs judge-b)",
        "eta": "nothing graded on side b",
    }
    assert list(comparison.flipped_to_fail) == ["alpha"]
