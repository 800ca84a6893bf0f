"""A run's records as plain rows (for `hemra export`), and restoring them (for `hemra import` of an export).

Rows are the tables' own columns, so a restored export holds the same cells, trials, attempts,
scores and events as the run it was made from, hence the same report tables and the same
compare output. It is an import, never a run HEMRA executed: it gets an import ID (the same
characters after "i-"), kind "import", and what the export said it was (ID, kind, label) is
kept as its provenance beside the file's digest, who imported it and when.

Nothing of the manifest is stored before all of it is checked (check_rows): every value a
reader turns into a message (a time, a state, a verdict, a number) is one HEMRA writes, and
what the store decides itself (verdicts, event counts, usage sums, lease counts) is decided
again, never taken from the file.
"""

import math
import posixpath
from dataclasses import dataclass

from google.protobuf import json_format
from sqlalchemy import JSON, BigInteger, Boolean, Float, Integer, String, Text, select
from sqlalchemy.ext.asyncio import AsyncSession

from hemra.services.common import runspec
from hemra.services.common.errors import FailedPrecondition, InvalidArgument
from hemra.services.domain import vocabulary
from hemra.services.domain.exportformat import DIGEST, FORMAT, VERSION
from hemra.services.domain.ids import PREFIXES, kind_of
from hemra.services.domain.records import attempt_blobs, task_blobs, tree_blobs
from hemra.services.domain.rewards import reward_problem
from hemra.services.domain.rewards import verdict as verdict_of
from hemra.services.store import convert, runreads, sqlrows, usage
from hemra.services.store import tables as t
from hemra.v1 import common_pb2 as pb

_TABLES = {
    "runs": t.Run,
    "cells": t.Cell,
    "trials": t.Trial,
    "attempts": t.Attempt,
    "tasks": t.Task,
    "datasets": t.Dataset,
    "harnesses": t.Harness,
}


def _row(obj) -> dict:
    return {column.key: getattr(obj, column.key) for column in obj.__table__.columns}


async def export_rows(session: AsyncSession, run: t.Run, trial_id: str = "") -> dict:
    """The run's rows; with `trial_id`, only that trial's (for an export by attempt or job ID),
    and for an import only the part of its tree that holds the trial's files."""
    cells = await runreads.cells_of(session, run.id)
    trials_query = select(t.Trial).where(t.Trial.run_id == run.id).order_by(t.Trial.id)
    attempts_query = select(t.Attempt).where(t.Attempt.run_id == run.id).order_by(t.Attempt.id)
    if trial_id:
        trials_query = trials_query.where(t.Trial.id == trial_id)
        attempts_query = attempts_query.where(t.Attempt.trial_id == trial_id)
    trials = list((await session.execute(trials_query)).scalars())
    attempts = list((await session.execute(attempts_query)).scalars())
    if trial_id:
        cells = [c for c in cells if c.id in {x.cell_id for x in trials}]
    task_digests = sorted({x.task_digest for x in trials})
    tasks = list((await session.execute(select(t.Task).where(t.Task.digest.in_(task_digests)))).scalars())
    datasets = list(
        (
            await session.execute(select(t.Dataset).where(t.Dataset.digest.in_({c.dataset_digest for c in cells})))
        ).scalars()
    )
    harnesses = list(
        (
            await session.execute(select(t.Harness).where(t.Harness.digest.in_({c.harness_digest for c in cells})))
        ).scalars()
    )
    run_row = _row(run)
    if trial_id and run_row.get("tree"):
        run_row["tree"] = tree_of(run_row["tree"], [a["path"] for x in attempts for a in x.artifacts or []])
    return {
        "format": FORMAT,
        "version": VERSION,
        "runs": [run_row],
        "cells": [_row(c) for c in cells],
        "trials": [_row(x) for x in trials],
        "attempts": [_row(a) for a in attempts],
        "tasks": [_row(x) for x in tasks],
        "datasets": [_row(d) for d in datasets],
        "harnesses": [_row(h) for h in harnesses],
    }


def tree_of(tree: list[dict], files: list[str]) -> list[dict]:
    """The entries of an import's tree that hold these files: the files, the folders above them,
    and everything under their deepest common folder (empty folders of a trial included)."""
    if not files:
        return []
    folders = {"/".join(f.split("/")[:i]) for f in files for i in range(1, f.count("/") + 1)}
    common = posixpath.commonpath(files) if len(files) > 1 else posixpath.dirname(files[0])
    wanted = set(files)
    return [
        e
        for e in tree
        if e["path"] in wanted or e["path"] in folders or (common and e["path"].startswith(common + "/"))
    ]


#: Which kind of ID each table's rows carry (ids.kind_of).
_ID_KINDS = {"runs": ("run", "import"), "cells": ("cell",), "trials": ("trial",), "attempts": ("attempt",)}
_DIGEST_TABLES = ("tasks", "datasets", "harnesses")
#: JSON numbers a row may hold: finite (PostgreSQL's JSON refuses NaN and Infinity, and a
#: report's averages of them are not numbers).
_MAX_NESTING = 64
#: The import_format of a restored export whose run HEMRA executed (an export of an import keeps
#: the format its results came in: its imported agents are pinned by it).
RESTORED_FORMAT = f"{FORMAT} {VERSION}"
#: Times HEMRA's clock wrote (a run's and its attempts'): from 2000-01-01 UTC to a day ahead of
#: the store's clock (clocks drift; no HEMRA ran before 2000).
EARLIEST_TIME = 946_684_800.0
LATEST_AHEAD_SECS = 86_400.0
#: Event durations: what a Duration can hold (events carry times and durations the harness
#: reported, so only what a reader can show is required of them).
_MAX_DURATION_SECS = 315_576_000_000.0


@dataclass
class Origin:
    """How an export reached the store, as the importer tells it (ImportProvenance)."""

    #: The import's label; "" keeps the export's own.
    label: str = ""
    imported_by: str = ""
    #: Where the export was read from.
    source: str = ""
    #: sha256 of the manifest file as it was read ("" when it was not sent as read).
    export_digest: str = ""


def check_rows(rows, now: float) -> None:
    """Refuse a manifest that is not exactly what export_rows writes: every row a dict of its
    table's columns with values of the column's type and length, every ID of HEMRA's own shape
    (they become file names on a later export) and unique, every digest sha256:<hex>, every
    reference to a row the manifest holds, every state, outcome and verdict one HEMRA knows,
    every time and number within the bounds HEMRA writes (`now`: the store's clock). One
    InvalidArgument naming the first problem."""
    if not isinstance(rows, dict):
        raise InvalidArgument("the export manifest is not a JSON object")
    if rows.get("format") != FORMAT or rows.get("version") != VERSION:
        raise InvalidArgument(f"not a {FORMAT} version {VERSION} manifest")
    unknown = sorted(set(rows) - {"format", "version", *_TABLES})
    if unknown:
        raise InvalidArgument(f"manifest: unknown key {unknown[0]!r}")
    for name, table in _TABLES.items():
        found = rows.get(name, [])
        if not isinstance(found, list):
            raise InvalidArgument(f"manifest: {name} must be a list of rows")
        rows[name] = [_check_row(name, table.__table__, row, index) for index, row in enumerate(found)]
    if len(rows["runs"]) != 1:
        raise InvalidArgument(f"manifest: runs must hold exactly one run (it holds {len(rows['runs'])})")
    for name, kinds in _ID_KINDS.items():
        _unique(name, "id", rows[name])
        for row in rows[name]:
            if kind_of(row["id"]) not in kinds:
                raise InvalidArgument(f"manifest: {name}: {row['id'][:100]!r} is not a HEMRA {kinds[0]} ID")
    for name in _DIGEST_TABLES:
        _unique(name, "digest", rows[name])
        for row in rows[name]:
            _digest(name, row["digest"])
    [run] = rows["runs"]
    # An executed run has a run ID; an import has an import ID, or a run ID when a store marked a
    # restored run as the import it was (migration 0018). Nothing else is either.
    # A loose attempt has a run ID, or an import ID once restored from an export.
    allowed = ("run",) if run["kind"] == "run" else ("run", "import")
    if run["kind"] not in ("run", "import", "loose") or kind_of(run["id"]) not in allowed:
        raise InvalidArgument(f"manifest: run {run['id']} has kind {run['kind'][:40]!r}")
    cells = {c["id"] for c in rows["cells"]}
    trials = {x["id"] for x in rows["trials"]}
    digests = {name: {x["digest"] for x in rows[name]} for name in _DIGEST_TABLES}
    _refer("cells", "run_id", rows["cells"], {run["id"]})
    _refer("cells", "dataset_digest", rows["cells"], digests["datasets"])
    _refer("cells", "harness_digest", rows["cells"], digests["harnesses"])
    _refer("trials", "run_id", rows["trials"], {run["id"]})
    _refer("trials", "cell_id", rows["trials"], cells)
    _refer("trials", "task_digest", rows["trials"], digests["tasks"])
    _refer("attempts", "run_id", rows["attempts"], {run["id"]})
    _refer("attempts", "trial_id", rows["attempts"], trials)
    for dataset in rows["datasets"]:
        listed = dataset["task_digests"]
        if not isinstance(listed, list) or not all(isinstance(d, str) for d in listed):
            raise InvalidArgument(f"manifest: datasets: {dataset['digest']}: task_digests must be a list of digests")
        for digest in listed:
            _digest("datasets", digest)
    _shapes(rows)
    for digest in blob_digests(rows):
        _digest("blob", digest)
    _bounds(rows, now)


def _bounds(rows: dict, now: float) -> None:
    """Every value a reader turns into a message is one HEMRA writes: times in range, numbers
    within their bounds, states, outcomes and verdicts from HEMRA's vocabulary."""
    [run] = rows["runs"]
    where = f"manifest: runs: {run['id']}"
    _time(where, "create_time", run["create_time"], now)
    for name in ("concurrency", "max_infra_retries"):
        least, most = runspec.BOUNDS[name]
        if not least <= run[name] <= most:
            raise InvalidArgument(f"{where}: {name} is {run[name]}, outside {least} to {most:,}")
    for dataset in rows["datasets"]:
        if dataset["create_time"] != 0:  # the store records datasets with 0
            _time(f"manifest: datasets: {dataset['digest']}", "create_time", dataset["create_time"], now)
    for cell in rows["cells"]:
        if cell["position"] < 0:
            raise InvalidArgument(f"manifest: cells: {cell['id']}: position is {cell['position']}, below 0")
    for trial in rows["trials"]:
        if trial["repetition"] < 1:
            raise InvalidArgument(f"manifest: trials: {trial['id']}: repetition is {trial['repetition']}, below 1")
    for attempt in rows["attempts"]:
        _check_attempt(attempt, now)


def _check_attempt(attempt: dict, now: float) -> None:
    where = f"manifest: attempts: {attempt['id']}"
    state, outcome, verdict = attempt["state"], attempt["outcome"], attempt["verdict"]
    if state not in vocabulary.STATES:
        raise InvalidArgument(f"{where}: state {state[:40]!r} is not one HEMRA knows ({', '.join(vocabulary.STATES)})")
    if outcome not in (None, "") and outcome not in vocabulary.OUTCOMES:
        raise InvalidArgument(
            f"{where}: outcome {outcome[:40]!r} is not one HEMRA knows ({', '.join(vocabulary.OUTCOMES)})"
        )
    if state == vocabulary.FINISHED and not outcome:
        raise InvalidArgument(f"{where}: a finished attempt needs an outcome")
    if verdict is not None and verdict not in vocabulary.VERDICTS:
        raise InvalidArgument(
            f"{where}: verdict {verdict[:40]!r} is not one HEMRA knows ({', '.join(vocabulary.VERDICTS)})"
        )
    if attempt["number"] < 1:
        raise InvalidArgument(f"{where}: number is {attempt['number']}, below 1")
    for key in ("create_time", "start_time", "end_time"):
        if attempt[key] is not None:
            _time(where, key, attempt[key], now)


def _time(where: str, key: str, value: float, now: float) -> None:
    """A time HEMRA's clock wrote: from EARLIEST_TIME to LATEST_AHEAD_SECS past `now`."""
    if not EARLIEST_TIME <= value <= now + LATEST_AHEAD_SECS:
        raise InvalidArgument(
            f"{where}: {key} {value!r} is not a time HEMRA records "
            "(from 2000-01-01 to a day ahead of the store's clock)"
        )


def _shapes(rows: dict) -> None:
    """The JSON columns blob_digests and the verifiers read have the shapes they expect."""

    def objects(value) -> bool:
        return isinstance(value, list) and all(isinstance(v, dict) for v in value)

    for name in ("tasks", "harnesses"):
        for row in rows[name]:
            if not isinstance(row["record"], dict):
                raise InvalidArgument(f"manifest: {name}: {row['digest']}: record must be an object")
    for task in rows["tasks"]:
        if not objects(task["record"].get("files", [])):
            raise InvalidArgument(f"manifest: tasks: {task['digest']}: files must be a list of objects")
    for attempt in rows["attempts"]:
        if not objects(attempt["artifacts"] or []) or not isinstance(attempt["score"] or {}, dict):
            raise InvalidArgument(f"manifest: attempts: {attempt['id']}: malformed artifacts or score")
        problem = reward_problem((attempt["score"] or {}).get("rewards", {}))
        if problem:
            raise InvalidArgument(f"manifest: attempts: {attempt['id']}: {problem}")
        where = f"manifest: attempts: {attempt['id']}"
        _message_shaped(attempt["score"] or {}, pb.Score, f"{where}: score")
        for artifact in attempt["artifacts"] or []:
            _message_shaped(artifact, pb.Artifact, f"{where}: artifacts")
        _judge_scores(attempt.get("judge_scores"), where)
    for run in rows["runs"]:
        run["tree"] = convert.checked_tree(run["tree"])
        if not isinstance(run["spec"], dict):
            raise InvalidArgument(f"manifest: runs: {run['id']}: spec must be an object")
        _message_shaped(run["spec"], pb.RunSpec, f"manifest: runs: {run['id']}: spec")


def _judge_scores(scores, where: str) -> None:
    """HEMRA judge scores as the store records them: Scores naming their judge, rewards in range."""
    if scores is None:
        return
    if not isinstance(scores, list) or not all(isinstance(s, dict) for s in scores):
        raise InvalidArgument(f"{where}: judge_scores must be a list of objects")
    for score in scores:
        _message_shaped(score, pb.Score, f"{where}: judge_scores")
        judge = score.get("judge")
        if not judge or score.get("scorer") != f"judge:{judge}":
            raise InvalidArgument(f"{where}: judge_scores: a judge score must name its judge")
        problem = reward_problem(score.get("rewards", {}))
        if problem:
            raise InvalidArgument(f"{where}: judge_scores: {problem}")


def _message_shaped(value: dict, message_type, where: str) -> None:
    """`value` is a `message_type` in its JSON form, as the store reads it back (no unknown key)."""
    try:
        convert.from_dict(value, message_type())
    except json_format.ParseError as exc:
        raise InvalidArgument(f"{where}: {str(exc).splitlines()[0][:300]}") from None


def check_events(events: dict[str, list[dict]], attempts: list[dict]) -> None:
    """Events belong to attempts the export holds, have distinct positive sequence numbers and
    fit their columns."""
    held = {a["id"] for a in attempts}
    for attempt_id, batch in events.items():
        if attempt_id not in held:
            shown = attempt_id[:100]
            raise InvalidArgument(f"events of attempt {shown!r}, which the export does not hold")
        seen = set()
        for index, event in enumerate(batch):
            _check_row(f"events of {attempt_id}", t.Event.__table__, dict(attempt_id=attempt_id, **event), index)
            if event["seq"] <= 0 or event["seq"] in seen:
                raise InvalidArgument(
                    f"events of {attempt_id}: sequence number {event['seq']} is repeated or not positive"
                )
            seen.add(event["seq"])
            # Events carry the times and durations a harness reported: any a reader can show.
            if not convert.is_showable_time(event["time"]):
                raise InvalidArgument(
                    f"events of {attempt_id}: event {event['seq']}: time {event['time']!r} is not a time"
                )
            if not abs(event["duration"]) <= _MAX_DURATION_SECS:
                raise InvalidArgument(
                    f"events of {attempt_id}: event {event['seq']}: duration {event['duration']!r} is out of range"
                )


def _check_row(name: str, table, row, index: int) -> dict:
    where = f"manifest: {name} row {index + 1}"
    if not isinstance(row, dict):
        raise InvalidArgument(f"{where}: not an object")
    columns = {c.key: c for c in table.columns}
    unknown = sorted(set(row) - set(columns))
    if unknown:
        raise InvalidArgument(f"{where}: unknown column {str(unknown[0])[:60]!r}")
    checked = {}
    for key, column in columns.items():
        if key not in row:
            if column.default is not None and not column.default.is_callable:
                checked[key] = column.default.arg
            elif column.default is not None:  # default=list
                checked[key] = []
            elif column.nullable:
                checked[key] = None
            else:
                raise InvalidArgument(f"{where}: missing column {key!r}")
            continue
        checked[key] = _check_value(where, column, row[key])
    return checked


def _check_value(where: str, column, value):
    kind = column.type
    if value is None:
        if not column.nullable:
            raise InvalidArgument(f"{where}: {column.key} may not be null")
        return None
    if isinstance(kind, (String, Text)):
        if not isinstance(value, str):
            raise InvalidArgument(f"{where}: {column.key} must be a string")
        if kind.length is not None and len(value) > kind.length:
            raise InvalidArgument(f"{where}: {column.key} is {len(value)} characters long, more than its {kind.length}")
        if "\0" in value:
            raise InvalidArgument(f"{where}: {column.key} holds a NUL character")
    elif isinstance(kind, Boolean):
        if not isinstance(value, bool):
            raise InvalidArgument(f"{where}: {column.key} must be true or false")
    elif isinstance(kind, Integer):
        bits = 64 if isinstance(kind, BigInteger) else 32
        if not isinstance(value, int) or isinstance(value, bool) or not -(2 ** (bits - 1)) <= value < 2 ** (bits - 1):
            raise InvalidArgument(f"{where}: {column.key} must be a {bits}-bit integer")
    elif isinstance(kind, Float):
        if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
            raise InvalidArgument(f"{where}: {column.key} must be a finite number")
        value = float(value)
    elif isinstance(kind, JSON):
        _check_json(where, column.key, value, 0)
    return value


def _check_json(where: str, key: str, value, depth: int) -> None:
    if depth > _MAX_NESTING:
        raise InvalidArgument(f"{where}: {key} is nested more than {_MAX_NESTING} deep")
    if isinstance(value, float) and not math.isfinite(value):
        raise InvalidArgument(f"{where}: {key} holds a number that is not finite")
    if isinstance(value, str) and "\0" in value:
        raise InvalidArgument(f"{where}: {key} holds a NUL character")
    if isinstance(value, dict):
        for k, v in value.items():
            _check_json(where, key, k, depth + 1)
            _check_json(where, key, v, depth + 1)
    elif isinstance(value, list):
        for v in value:
            _check_json(where, key, v, depth + 1)


def _unique(name: str, key: str, rows: list[dict]) -> None:
    seen = set()
    for row in rows:
        if row[key] in seen:
            raise InvalidArgument(f"manifest: {name}: {row[key][:100]!r} appears twice")
        seen.add(row[key])


def _digest(name: str, value) -> None:
    if not isinstance(value, str) or not DIGEST.fullmatch(value):
        raise InvalidArgument(f"manifest: {name}: {str(value)[:100]!r} is not a sha256:<hex> digest")


def _refer(name: str, key: str, rows: list[dict], known: set) -> None:
    for row in rows:
        if row[key] not in known:
            raise InvalidArgument(
                f"manifest: {name}: {row['id']} names {key} {row[key][:100]!r}, which the export does not hold"
            )


def blob_digests(rows: dict) -> set[str]:
    """Every blob the rows refer to: task files, artifacts, verifier output, an import's tree."""
    found = [d for task in rows["tasks"] for d in task_blobs(task["record"])]
    for attempt in rows["attempts"]:
        found += attempt_blobs(attempt["artifacts"], attempt["score"], attempt.get("judge_scores"))
    for run in rows["runs"]:
        found += tree_blobs(run.get("tree"))
    # A digest that is not a string (a crafted manifest) comes out as its repr: check_rows refuses it.
    return {d if isinstance(d, str) else repr(d) for d in found} - {""}


def import_id(run_id: str) -> str:
    """The ID a restored export's run is kept under: an import ID with the same characters (so
    a second restore of the same export, or of an export of it, finds it taken)."""
    return PREFIXES["import"] + run_id[1:]


async def restore_rows(
    session: AsyncSession, rows: dict, events: dict[str, list[dict]], origin: Origin, now: float
) -> t.Run:
    """Insert an export's rows as an import, in one transaction (the caller's). The rows and
    events were checked (check_rows, check_events) and its tasks and harnesses verified.
    What the store decides itself is decided again: verdicts from the scores, event counts and
    usage from the events, and the run's own columns (kind, provenance, leases) by the store."""
    [run] = rows["runs"]
    for taken_id in dict.fromkeys((run["id"], import_id(run["id"]))):
        taken = await session.get(t.Run, taken_id)
        if taken is not None:
            raise FailedPrecondition(
                f"{run['id']} ({run['label']}) is already in this store (as {taken.kind} {taken.id}, {taken.label})"
            )
    for name in ("cells", "trials", "attempts"):
        table = _TABLES[name]
        ids = [row["id"] for row in rows[name]]
        for start in range(0, len(ids), 1000):
            taken = (await session.execute(select(table.id).where(table.id.in_(ids[start : start + 1000])))).first()
            if taken is not None:
                raise FailedPrecondition(
                    f"{name[:-1]} {taken[0]} of the export is already in this store (another run holds it)"
                )
    _as_import(rows, origin, now)
    for name in ("tasks", "datasets", "harnesses"):
        await sqlrows.insert_ignore(session, _TABLES[name].__table__, rows[name])
    for attempt in rows["attempts"]:
        batch = events.get(attempt["id"], [])
        # What the manifest says of usage and event counts is not taken: they are counted.
        attempt.update(event_count=len(batch), **usage.of_events(batch).summed())
        # Nor its verdict: decided from the score, by the rule that decides executed attempts'.
        finished = attempt["state"] == vocabulary.FINISHED
        attempt["verdict"] = verdict_of(attempt["outcome"], attempt.get("score")) if finished else None
    for name in ("runs", "cells", "trials", "attempts"):
        if rows[name]:
            await session.execute(_TABLES[name].__table__.insert(), rows[name])
    for attempt_id, batch in events.items():
        if batch:
            await session.execute(t.Event.__table__.insert(), [dict(attempt_id=attempt_id, **e) for e in batch])
    return await session.get(t.Run, rows["runs"][0]["id"])


def _as_import(rows: dict, origin: Origin, now: float) -> None:
    """Make the manifest's run row the import it is: an import ID and kind, the store's own
    provenance, what the export said it was kept as original_*; its rows refer to the new ID."""
    [run] = rows["runs"]
    label = origin.label or run["label"]
    sqlrows.check_strings(
        t.Run.__table__, dict(label=label, imported_by=origin.imported_by, source=origin.source), "import"
    )
    new_id = import_id(run["id"])
    run.update(
        id=new_id,
        label=label,
        # A loose attempt stays one (never in a report or compare); anything else is an import.
        kind="loose" if run["kind"] == "loose" else "import",
        import_format=run["import_format"] if run["kind"] == "import" and run["import_format"] else RESTORED_FORMAT,
        source=origin.source,
        export_digest=origin.export_digest,
        imported_by=origin.imported_by,
        import_time=now,
        original_id=run["id"],
        original_kind=run["kind"],
        original_label=run["label"],
        # A request ID is the recording client's, for its own run here: never a restore's.
        request_id=None,
        # An import is settled and never leased, cancelled or judged before it is recorded.
        cancel_requested=False,
        leased=0,
        limited=False,
        judge_version=0,
    )
    for name in ("cells", "trials", "attempts"):
        for row in rows[name]:
            row["run_id"] = new_id
