"""The records the store returns hold what its rows hold: a column added to a table is a field
of its record too, or the reads would drop it without a word."""

from dataclasses import fields

from hemra.services.domain.records import AttemptInfo, CellInfo, HarnessFacts, TaskIdentity, TrialInfo, history_kept
from hemra.services.store import tables as t


def test_an_attempt_record_has_every_column_of_its_row():
    assert [f.name for f in fields(AttemptInfo)] == [c.name for c in t.Attempt.__table__.c]


def test_trial_and_cell_records_hold_columns_of_their_rows():
    assert [f.name for f in fields(TrialInfo)] == [c.name for c in t.Trial.__table__.c]
    assert {f.name for f in fields(CellInfo)} <= {c.name for c in t.Cell.__table__.c}


def test_stored_json_reads_as_hemra_wrote_it_and_anything_else_as_nothing():
    harness = HarnessFacts.of({"kind": "cli", "agent": "a", "agentVersion": "1.2", "model": "m", "env": ["K"]})
    assert harness == HarnessFacts("cli", "a", "1.2", "m", ("K",))
    assert HarnessFacts.of(["not", "a", "record"]) == HarnessFacts() == HarnessFacts.of(None)
    assert TaskIdentity.of({"harborDigest": "sha256:x", "files": [{}]}) == TaskIdentity("sha256:x", True)
    assert TaskIdentity.of(None) == TaskIdentity("", False)
    assert history_kept({"historyKept": ["t1", "t2"]}) == {"t1", "t2"}
    assert history_kept([1]) == frozenset() == history_kept({"historyKept": None})
