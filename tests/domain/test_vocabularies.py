"""One test per vocabulary: proto, SQL, Python and the dashboard's generated JS agree on the
words of verdicts and of attempt states (services/domain/vocabulary.py is their one home)."""

import re
import subprocess
import sys

from sqlalchemy import select

from hemra.services.domain import vocabulary
from hemra.services.domain.vocabulary import State, Verdict
from hemra.services.store import completion
from hemra.services.store import tables as t
from hemra.v1 import common_pb2 as pb
from tests.conftest import REPO
from tests.store.test_queue import plan, store  # noqa: F401  (a fixture)

JS = REPO / "clients" / "dashboard" / "src" / "vocabulary.js"
SCORED = "SCORE_STATE_SCORED"


def _js_list(name: str) -> list[str]:
    found = re.search(rf"export const {name} = Object\.freeze\(\[(.*?)\]\);", JS.read_text())
    assert found, f"{name} missing from {JS}"
    return re.findall(r"'([a-z_]+)'", found.group(1))


def _column_fits(column, words) -> bool:
    return all(len(w) <= column.type.length for w in words)


def test_the_generated_js_matches_its_source():
    result = subprocess.run(
        [sys.executable, "scripts/gen_vocabulary.py", "--check"], cwd=REPO, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr


async def test_verdicts__proto_sql_python_and_js_agree(store):  # noqa: F811
    words = [v.value for v in Verdict]
    assert list(vocabulary.VERDICTS) == words
    # Proto: a run's progress counts each verdict in a field of its name.
    assert set(words) <= {f.name for f in pb.RunProgress.DESCRIPTOR.fields}
    # JS: the dashboard's generated constants.
    assert _js_list("VERDICTS") == words
    # SQL: the store records exactly these words, and its column holds each.
    assert _column_fits(t.Attempt.__table__.c.verdict, words)
    run, _ = await store.record_run(plan(trials=4))
    endings = [
        completion.Completion(vocabulary.COMPLETED, score={"state": SCORED, "rewards": {"reward": 1}}),
        completion.Completion(vocabulary.COMPLETED, score={"state": SCORED, "rewards": {"reward": 0}}),
        completion.Completion(vocabulary.INFRA_FAILED, error="the host went away"),
        completion.Completion(vocabulary.CANCELLED),
    ]
    for done in endings:
        claimed = await store.claim_job("w1", 30)
        await store.complete_job(claimed.job.id, claimed.job.lease_token, done)
    async with store.sessions() as session:
        stored = (await session.execute(select(t.Attempt.verdict).where(t.Attempt.run_id == run.id))).scalars()
        assert sorted(stored) == sorted(words)


async def test_states__proto_sql_python_and_js_agree(store):  # noqa: F811
    words = [s.value for s in State]
    assert list(vocabulary.STATES) == words
    # Proto: hemra.v1.AttemptState, value by value, and a progress count per unfinished state.
    proto = [vocabulary.short_name(pb.AttemptState.DESCRIPTOR, v.number) for v in pb.AttemptState.DESCRIPTOR.values]
    assert [w for w in proto if w] == words
    assert all(vocabulary.STATES[w] == pb.AttemptState.Value(f"ATTEMPT_STATE_{w.upper()}") for w in words)
    assert {State.QUEUED, State.RUNNING} <= {f.name for f in pb.RunProgress.DESCRIPTOR.fields}
    # JS: the dashboard's generated constants.
    assert _js_list("STATES") == words
    # SQL: the store records exactly these words, and its column holds each.
    assert _column_fits(t.Attempt.__table__.c.state, words)
    run, _ = await store.record_run(plan(trials=3))
    finished = await store.claim_job("w1", 30)
    await store.complete_job(finished.job.id, finished.job.lease_token, completion.Completion(vocabulary.COMPLETED))
    await store.claim_job("w1", 30)  # left running
    async with store.sessions() as session:
        stored = (await session.execute(select(t.Attempt.state).where(t.Attempt.run_id == run.id))).scalars()
        assert sorted(stored) == sorted(words)
