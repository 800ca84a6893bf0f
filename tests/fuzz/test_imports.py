"""The folders `hemra import` reads, each a real one with one value, key or nesting changed
(tests/fuzz/mutate.py): a Harbor job (its config, lock and trial files), a SWE-bench run (its
report and an instance's report.json), and an export made by `hemra export` (its manifest, an
event line, a blob's name), imported through the real importer and store; and the manifest
restored straight into the store, on SQLite and PostgreSQL. Every outcome is an import or a
one-line refusal (ImportProblem, a store error), never another exception (a traceback); a
refused import leaves the store as it was, and it still reads afterwards."""

import json
import shutil

import grpc
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from sqlalchemy import delete, select

from hemra.services.common.errors import HemraError
from hemra.services.domain.exportformat import MANIFEST
from hemra.services.importer import record
from hemra.services.importer.pipeline import _read
from hemra.services.store import convert
from hemra.services.store import tables as t
from hemra.services.store.requests import planned_run
from hemra.services.store.service import Store
from hemra.v1 import importer_service_pb2 as ipb
from hemra.v1 import store_service_pb2 as spb
from tests.fuzz.deployment import call, still_reads
from tests.fuzz.mutate import DEEP, JSON, examples, json_text, json_values, mutated, paths, replaced
from tests.fuzz.test_frontdoor import _snapshot
from tests.importer.swebench_fixture import write_run
from tests.importer.test_imports import unpack
from tests.store.test_hostile_restore import _manifest, _nop, _real_task
from tests.store.test_queue import FakeClock


def _import(root) -> None:
    """What the importer reads and records of a folder, without a store (fast)."""
    results, entries = _read(root, "", lambda files: None)
    request = record.build_request(results, root, "fuzz", entries, {})
    planned_run(request)


def _refused_in_one_line(attempt, text: str) -> None:
    try:
        attempt(text)
    except HemraError as exc:
        assert exc.code.name != "INTERNAL", f"{type(exc).__name__}: {exc}"
        assert "\n" not in str(exc).strip(), f"not one line: {str(exc)[:300]!r}"


#: How deep a mutation may nest a value: past Python's recursion limit, which every reader bounds.
FOLDER_NESTING = DEEP


def _changed(document, deep=DEEP):
    return mutated(document, values=json_values(deep), deep=deep).map(json_text)


# --- Harbor ---------------------------------------------------------------------------------
@pytest.fixture
def harbor_job(tmp_path):
    return unpack("harbor-0.25-nop.tar", tmp_path)


def _harbor_file(job, name):
    trial = next(p for p in sorted(job.iterdir()) if p.is_dir())
    return (trial if name.startswith("trial/") else job) / name.removeprefix("trial/")


@pytest.mark.parametrize("name", ["config.json", "lock.json", "trial/result.json", "trial/config.json"])
def test_harbor_job__fuzzed(harbor_job, name):
    path = _harbor_file(harbor_job, name)
    original = json.loads(path.read_text())

    def attempt(text):
        path.write_text(text)
        _import(harbor_job)

    @given(text=_changed(original, FOLDER_NESTING))
    @settings(max_examples=examples(60))
    def check(text):
        _refused_in_one_line(attempt, text)

    check()


# --- SWE-bench ------------------------------------------------------------------------------
def _swebench_file(folder, name):
    """The run's report, or the report.json of its first (resolved) instance."""
    return next(folder.glob("*.json")) if name == "summary" else sorted(folder.rglob("report.json"))[0]


@pytest.mark.parametrize(
    "name",
    [
        "summary",
        "report",
    ],
)
def test_swebench_run__fuzzed(tmp_path, name):
    folder = write_run(tmp_path / "run")
    path = _swebench_file(folder, name)
    original = json.loads(path.read_text())

    def attempt(text):
        path.write_text(text)
        _import(folder)

    @given(text=_changed(original, FOLDER_NESTING))
    @settings(max_examples=examples(80))
    @example(text=json.dumps({path.parent.name: []}))  # an entry that is no object, found by this fuzz
    def check(text):
        _refused_in_one_line(attempt, text)

    check()


@pytest.mark.parametrize(
    "name", ["harbor:config.json", "harbor:trial/result.json", "swebench:summary", "swebench:report"]
)
def test_import_json_nested_deep__refused(tmp_path, name):
    """A file nested 100,000 deep is refused in one line like any other file that is not JSON."""
    kind, _, file = name.partition(":")
    folder = unpack("harbor-0.25-nop.tar", tmp_path) if kind == "harbor" else write_run(tmp_path / "run")
    path = _harbor_file(folder, file) if kind == "harbor" else _swebench_file(folder, file)
    path.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(HemraError) as refused:
        _import(folder)
    assert "\n" not in str(refused.value).strip()


# --- exports, through the importer and the store --------------------------------------------
@pytest.fixture(scope="module")
def importer(deployment):
    with grpc.insecure_channel(deployment.addresses["importer"]) as channel:
        yield channel


@pytest.fixture(scope="module")
def door(deployment):
    with grpc.insecure_channel(deployment.door) as channel:
        yield channel


def _export_changes(export):
    """(file, new text) pairs: the manifest with one thing changed, or a blob under another name."""
    manifest = json.loads((export / MANIFEST).read_text())
    blob = sorted((export / "blobs").glob("*/*"))[0]
    in_manifest = _changed(manifest).map(lambda text: (MANIFEST, text))
    renamed = st.sampled_from(["../x", "00", blob.name[:-1] + "0", "a" * 70, "x y"]).map(
        lambda name: ("rename:" + str(blob.relative_to(export)), name)
    )
    return in_manifest | in_manifest | renamed


def _event_changes(export):
    """(file, new text) pairs: an event line with one thing changed."""
    events = sorted((export / "events").glob("*.jsonl"))[0]
    lines = events.read_text().splitlines()
    name = str(events.relative_to(export))
    return _changed(json.loads(lines[0])).map(lambda text: (name, "\n".join([text, *lines[1:]])))


def _imported_or_refused(importer, door, fuzz_export, folder, change) -> None:
    """Import a copy of the export with `change` made: imported, or refused in one line with
    the store as it was."""
    shutil.rmtree(folder, ignore_errors=True)
    shutil.copytree(fuzz_export, folder)
    target, text = change
    if target.startswith("rename:"):
        blob = folder / target.removeprefix("rename:")
        blob.rename(blob.parent / text)
    else:
        (folder / target).write_text(text)
    before = _snapshot(door)
    request = ipb.ImportResultsRequest(path=str(folder), label="fuzzed-export")
    code, details, _ = call(importer, "/hemra.v1.ImporterService/ImportResults", request.SerializeToString())
    if code == grpc.StatusCode.OK:
        return
    assert code in (grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.FAILED_PRECONDITION), (
        f"{code.name}: {details[:500]} ({target}: {text[:300]!r})"
    )
    assert "\n" not in details.strip(), f"not one line: {details[:500]!r}"
    assert _snapshot(door) == before, f"refused ({details[:200]}) but the store changed"


def test_export_import__fuzzed(deployment, importer, door, fuzz_export, tmp_path):
    @given(change=_export_changes(fuzz_export))
    @settings(max_examples=examples(30))
    @example(change=(MANIFEST, "[" * 100_000 + "]" * 100_000))
    def check(change):
        _imported_or_refused(importer, door, fuzz_export, tmp_path / "export", change)

    check()
    still_reads(door, deployment.http)


def test_export_events_import__fuzzed(deployment, importer, door, fuzz_export, tmp_path):
    changes = _event_changes(fuzz_export)
    events = sorted((fuzz_export / "events").glob("*.jsonl"))[0]

    @given(change=changes)
    @settings(max_examples=examples(20))
    @example(change=(str(events.relative_to(fuzz_export)), '{"": 1}'))  # a two-line parse error, found by this fuzz
    def check(change):
        _imported_or_refused(importer, door, fuzz_export, tmp_path / "export", change)

    check()
    still_reads(door, deployment.http)


#: A value of the same JSON type as the one it replaces: what gets past the type checks, so that
#: the bounds of times and numbers and the words of states and verdicts are what is tried.
SAME_TYPE = {
    bool: st.booleans(),
    int: st.integers(min_value=-(2**40), max_value=2**40),
    float: st.floats() | st.sampled_from([1e300, -1e300, 0.0, 946_684_799.0, 1_800_000_000.0 + 86_401]),
    str: st.text(max_size=12) | st.sampled_from(["pwned", "finished", "queued", "passed", "run", "import", ""]),
}


@st.composite
def same_typed(draw, document):
    """`document` with one scalar replaced by another of its type."""
    places = [path for path in paths(document) if type(_at(document, path)) in SAME_TYPE]
    path = draw(st.sampled_from(places))
    return replaced(document, path, draw(SAME_TYPE[type(_at(document, path))]))


def _at(document, path):
    for key in path:
        document = document[key]
    return document


async def test_restore_manifest__fuzzed(database_url, tmp_path):
    """RestoreRun's manifest straight into the store (the rows an export holds), every row
    checked: refused in one line, or restored as an import that every reader reads whole (no
    value of it left out as unreadable): nothing a manifest holds can break a read of the store."""
    store = await Store.open(database_url, tmp_path / "blobs", FakeClock())
    try:
        original = _manifest(await _real_task(store), _nop())
        documents = []

        @given(document=mutated(original, values=JSON) | same_typed(original))
        @settings(max_examples=examples(160 if database_url.startswith("sqlite") else 50))
        def collect(document):
            documents.append(document)

        collect()
        unexpected = []
        for document in documents:
            try:
                manifest = json.loads(json_text(document))
            except RecursionError:  # nested too deep to be a manifest in memory: the import's case
                continue
            try:
                run, _ = await store.restore_run(manifest, {})
                problems = await _read_back(store, run.id)
                if problems:
                    unexpected.append(("unreadable", problems, json_text(document)[:300]))
                await _drop(store, run.id)
            except HemraError as exc:
                assert "\n" not in str(exc).strip(), str(exc)
            except Exception as exc:  # the failure this test looks for
                unexpected.append((type(exc).__name__, str(exc)[:200], json_text(document)[:300]))
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
    found += [convert.attempt_to_proto(row.attempt, row.trial, row.cell) for row in rows]
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
