"""Bounded fuzz of the import and restore paths (issue 12): a Harbor trial, a SWE-bench run
report and an export manifest, each with one value anywhere replaced by any JSON value.
Every outcome is an import or a one-line refusal (ImportProblem, a store error), never
another exception (a traceback)."""

import copy
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from services.common.errors import HemraError
from services.importer import record
from services.importer.errors import ImportProblem
from services.importer.pipeline import _read
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


def _mutations(document, examples: int = EXAMPLES) -> list:
    """Documents with one value replaced, drawn by hypothesis (bounded, no database of examples)."""
    paths = list(_paths(document))
    found = []

    @given(path=st.sampled_from(paths), value=JSON)
    @settings(max_examples=examples, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    def draw(path, value):
        found.append(_replaced(document, path, value))

    draw()
    return found


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
    store = await Store.open(database_url, tmp_path / "blobs", FakeClock())
    try:
        original = _manifest(await _real_task(store), _nop())
        documents = _mutations(original, EXAMPLES if database_url.startswith("sqlite") else EXAMPLES // 3)
        unexpected = []
        for document in documents:
            try:
                await store.restore_run(document, {})
            except HemraError as exc:
                assert "\n" not in str(exc), str(exc)
            except Exception as exc:  # the failure this test looks for
                unexpected.append((type(exc).__name__, str(exc)[:200], json.dumps(document, default=str)[:300]))
        assert not unexpected, unexpected[:5]
    finally:
        await store.close()
