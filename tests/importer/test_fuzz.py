"""Bounded fuzz of the import and restore paths (issue 12): a Harbor trial, a SWE-bench run
report and an export manifest, each with one value anywhere replaced by any JSON value.
Every outcome is an import or a one-line refusal (ImportProblem, a store error), never
another exception (a traceback)."""

import copy
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import delete, select

from hemra.v1 import store_service_pb2 as spb
from services.common.errors import HemraError
from services.importer import record
from services.importer.errors import ImportProblem
from services.importer.pipeline import _read
from services.store import convert
from services.store import tables as t
from services.store.requests import planned_run
from services.store.service import Store
from tests.importer.swebench_fixture import write_run
from tests.importer.test_imports import unpack
from tests.store.test_hostile_restore import _manifest, _nop, _real_task
from tests.store.test_queue import FakeClock

EXAMPLES = 120
JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats()
    | st.text(max_size=12)
    | st.sampled_from(["../../x", "/etc", "", "1e308"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6,
)


def _paths(value, prefix=()):
    """Every place in a JSON document a value sits (the document itself included)."""
    yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, prefix + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _paths(item, prefix + (index,))


def _replaced(document, path, value):
    if not path:
        return value
    document = copy.deepcopy(document)
    target = document
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return document


#: A value of the same JSON type as the one it replaces: what gets past the type checks, so that
#: the bounds of times and numbers and the words of states and verdicts are what is tried.
SAME_TYPE = {
    bool: st.booleans(),
    int: st.integers(min_value=-(2**40), max_value=2**40),
    float: st.floats() | st.sampled_from([1e300, -1e300, 0.0, 946_684_799.0, 1_800_000_000.0 + 86_401]),
    str: st.text(max_size=12) | st.sampled_from(["pwned", "finished", "queued", "passed", "run", "import", ""]),
}


def _mutations(document, examples: int = EXAMPLES, same_type: bool = False) -> list:
    """Documents with one value replaced, drawn by hypothesis (bounded, no database of examples);
    with `same_type`, only scalars, each by a value of its own type."""
    paths = list(_paths(document))
    if same_type:
        paths = [path for path in paths if type(_at(document, path)) in SAME_TYPE]
    found = []

    @given(path=st.sampled_from(paths), data=st.data())
    @settings(max_examples=examples, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    def draw(path, data):
        value = data.draw(SAME_TYPE[type(_at(document, path))] if same_type else JSON)
        found.append(_replaced(document, path, value))

    draw()
    return found


def _at(document, path):
    for key in path:
        document = document[key]
    return document


def _import(root) -> None:
    results, entries = _read(root, "", lambda files: None)
    request = record.build_request(results, root, "fuzz", entries, {})
    planned_run(request)


def _only_refusals(attempt, documents) -> None:
    unexpected = []
    for document in documents:
        try:
            attempt(document)
        except (ImportProblem, HemraError) as exc:
            assert "\n" not in str(exc), str(exc)
        except Exception as exc:  # the failure this test looks for
            unexpected.append((type(exc).__name__, str(exc)[:200], json.dumps(document, default=str)[:300]))
    assert not unexpected, unexpected[:5]


@pytest.mark.slow
def test_harbor_trial_result__fuzzed(tmp_path):
    job = unpack("harbor-0.25-nop.tar", tmp_path)
    trial = next(p for p in sorted(job.iterdir()) if p.is_dir())
    original = json.loads((trial / "result.json").read_text())

    def attempt(document):
        (trial / "result.json").write_text(json.dumps(document))
        _import(job)

    _only_refusals(attempt, _mutations(original))


@pytest.mark.slow
def test_swebench_run_report__fuzzed(tmp_path):
    folder = write_run(tmp_path / "run")
    summary = next(folder.glob("*.json"))
    original = json.loads(summary.read_text())

    def attempt(document):
        summary.write_text(json.dumps(document))
        _import(folder)

    _only_refusals(attempt, _mutations(original))


async def test_restore_manifest__fuzzed(database_url, tmp_path):
    """Refused in one line, or restored as an import that every reader reads whole (no value of
    it left out as unreadable): nothing a manifest holds can break a read of the store."""
    store = await Store.open(database_url, tmp_path / "blobs", FakeClock())
    try:
        original = _manifest(await _real_task(store), _nop())
        examples = EXAMPLES if database_url.startswith("sqlite") else EXAMPLES // 3
        documents = _mutations(original, examples) + _mutations(original, examples, same_type=True)
        unexpected = []
        for document in documents:
            try:
                run, _ = await store.restore_run(document, {})
                problems = await _read_back(store, run.id)
                if problems:
                    unexpected.append(("unreadable", problems, json.dumps(document, default=str)[:300]))
                await _drop(store, run.id)
            except HemraError as exc:
                assert "\n" not in str(exc), str(exc)
            except Exception as exc:  # the failure this test looks for
                unexpected.append((type(exc).__name__, str(exc)[:200], json.dumps(document, default=str)[:300]))
        assert not unexpected, unexpected[:5]
    finally:
        await store.close()


async def _read_back(store, run_id: str) -> list[str]:
    """Every reader of a restored import, as the servicer converts it: the problems they name."""
    run, cells, progress = await store.get_run(run_id)
    found = [convert.run_to_proto(run, cells, progress)]
    listed, _ = await store.list_runs(1000, "")
    found += [convert.run_to_proto(*entry) for entry in listed]
    rows, _ = await store.list_attempts(run_id, 1000, "")
    found += [convert.attempt_to_proto(*row) for row in rows]
    convert.message(await store.run_report(run_id), spb.Report)
    return [message.problem for message in found if message.problem]


async def _drop(store, run_id: str) -> None:
    """Delete a restored import, so that the next document (the same IDs, one value changed)
    is restored too rather than refused as already in the store."""
    async with store.sessions.begin() as session:
        cells = select(t.Cell.id).where(t.Cell.run_id == run_id)
        attempts = select(t.Attempt.id).where(t.Attempt.run_id == run_id)
        await session.execute(delete(t.SettledCell).where(t.SettledCell.cell_id.in_(cells)))
        await session.execute(delete(t.Event).where(t.Event.attempt_id.in_(attempts)))
        for table in (t.Attempt, t.Trial, t.Cell):
            await session.execute(delete(table).where(table.run_id == run_id))
        await session.execute(delete(t.Run).where(t.Run.id == run_id))
    store.forget()
