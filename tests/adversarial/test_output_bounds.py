"""The bounds under the output attacks, unit by unit: line splitting, the event log's cap, the
agent streams' line reader, artifact collection in batches, terminal escaping."""

import json

import pytest

from hemra.clients.cli.safe import clean, safe_json
from hemra.services.executor import artifacts, events
from hemra.services.executor.events import EventLog, Lines, event, output_events
from hemra.services.executor.harnesses.cli.claude_code import ClaudeStream
from hemra.v1 import store_service_pb2 as spb


class FakeStore:
    """Records what would reach the store; refuses a request over `limit` bytes as gRPC would."""

    def __init__(self, limit: int = 256 * 1024 * 1024):
        self.limit = limit
        self.events, self.blob_requests = [], []

    async def AppendEvents(self, request, retry_for=0.0):
        assert request.ByteSize() <= self.limit, "Sent message larger than max"
        self.events.extend(request.events)
        return spb.AppendEventsResponse()

    async def PutBlobs(self, request):
        assert request.ByteSize() <= self.limit, "Sent message larger than max"
        self.blob_requests.append([len(b.data) for b in request.blobs])
        return spb.PutBlobsResponse(digests=[f"sha256:{i:064x}" for i, _ in enumerate(request.blobs)])


def test_lines__a_line_longer_than_the_limit_comes_out_in_pieces_never_refused():
    lines = Lines(100)
    out = lines.feed(b"x" * 250) + lines.feed(b"y\n{}\n") + lines.close()
    assert [(len(line), whole) for line, whole in out] == [(100, False), (100, False), (52, False), (3, True)]
    assert b"".join(line for line, _ in out) == b"x" * 250 + b"y\n{}\n"


def test_lines__pieces_never_split_a_character():
    out = Lines(5).feed("ééé\n".encode())
    assert all(line.decode() for line, _ in out)


def test_output_events__long_output_is_split_not_cut():
    found = output_events("stdout", "é".encode() * 100_000)
    assert len(found) > 1
    assert "".join(json.loads(e.payload_json)["text"] for e in found) == "é" * 100_000


async def test_event_log__capped_with_markers_and_room_for_hemras_own_events(monkeypatch):
    monkeypatch.setenv("HEMRA_MAX_EVENT_BYTES", "100000")
    store = FakeStore()
    log = EventLog(store, "j", 1)
    for _ in range(1000):
        await log.emit(event("output", "stdout", text="a" * 10_000))
    await log.emit(event("status", "harness_end", outcome="completed"))
    await log.flush()
    kept = [e for e in store.events if e.type == "output"]
    assert 9 <= len(kept) <= 10
    names = [e.name for e in store.events]
    assert names.count("events_truncated") == 1 and names[-2:] == ["harness_end", "events_dropped"]
    dropped = json.loads(store.events[-1].payload_json)
    assert dropped["dropped_events"] >= 990 and dropped["dropped_bytes"] > 9_000_000


async def test_event_log__oversized_and_invalid_payloads_are_replaced_by_their_head():
    store = FakeStore()
    log = EventLog(store, "j", 1)
    huge = event("message", "m" * 1000, text="b" * (events.MAX_EVENT_PAYLOAD * 3))
    await log.emit(huge, event("message", "bad"))
    store_events = store.events
    await log.flush()
    first, second = store_events
    assert len(first.name) == events.MAX_NAME
    assert json.loads(first.payload_json)["payload_truncated"] is True
    assert len(first.payload_json) < events.MAX_EVENT_PAYLOAD
    second_bad = event("message", "bad")
    second_bad.payload_json = "not json"
    await log.emit(second_bad)
    await log.flush()
    assert json.loads(store.events[-1].payload_json)["payload_invalid"] is True
    assert json.loads(second.payload_json) == {}


def test_cli_stream__a_line_without_end_stays_bounded():
    stream = ClaudeStream()
    out = []
    for _ in range(40):  # 40 MiB, no newline
        out += stream.feed(b"z" * (1024 * 1024))
        assert len(stream._lines._partial) <= 8 * 1024 * 1024
    out += stream.close()
    assert sum(len(json.loads(e.payload_json)["text"]) for e in out) == 40 * 1024 * 1024
    assert {e.type for e in out} == {"output"}


class FakeSandbox:
    """Files of given sizes; reads honour `limit` and count what they read."""

    def __init__(self, files: dict[str, int]):
        self.files = files
        self.read = 0

    async def list_files(self, folder):
        return sorted(p for p in self.files if p.startswith(folder + "/"))

    async def file_size(self, path):
        return self.files[path]

    async def read_file(self, path, limit=None):
        size = self.files[path] if limit is None else min(limit, self.files[path])
        self.read += size
        return b"x" * size


async def test_collect__five_files_over_the_message_limit_go_in_batches(monkeypatch):
    """Five 60 MB files against a 100 MB message limit (the real one: 256 MiB)."""
    monkeypatch.setattr(artifacts, "BATCH_BYTES", 64_000_000)
    store = FakeStore(limit=100_000_000)
    sandbox = FakeSandbox({f"/logs/artifacts/f{i}": 60_000_000 for i in range(5)})
    found = await artifacts.collect(sandbox, store, EventLog(store, "j", 1))
    assert len(found) == 5 and all(a.blob_digest for a in found)
    assert all(sum(batch) <= 64_000_000 for batch in store.blob_requests)


async def test_collect__caps_per_file_and_per_attempt_with_markers(monkeypatch):
    monkeypatch.setenv("HEMRA_MAX_ARTIFACT_BYTES", "1000")
    monkeypatch.setenv("HEMRA_MAX_ARTIFACTS_BYTES", "2500")
    store = FakeStore()
    log = EventLog(store, "j", 1)
    sandbox = FakeSandbox(
        {
            "/logs/verifier/reward.txt": 2,
            "/logs/agent/a": 5000,
            "/logs/agent/b": 5000,
            "/logs/agent/c": 5000,
            "/logs/artifacts/huge": 2 * 1024**3,
        }
    )
    found = {a.path: a for a in await artifacts.collect(sandbox, store, log)}
    await log.flush()
    assert list(found) == ["/logs/agent/a", "/logs/agent/b", "/logs/agent/c", "/logs/verifier/reward.txt"]
    assert found["/logs/agent/a"].size_bytes == 5000  # the whole size; 1000 bytes kept
    assert sandbox.read <= 2500 and sum(map(sum, store.blob_requests)) == 2500
    marked = {(e.name, json.loads(e.payload_json).get("path")) for e in store.events}
    assert ("artifact_truncated", "/logs/agent/c") in marked
    assert ("artifact_dropped", "/logs/artifacts/huge") in marked
    [summary] = [json.loads(e.payload_json) for e in store.events if e.name == "artifacts_capped"]
    assert summary["artifact_truncated"] == 3 and summary["artifact_dropped"] == 1


async def test_collect__hemras_own_logs_win_over_the_sandboxs_files():
    store = FakeStore()
    log = EventLog(store, "j", 1)
    own = artifacts.OwnLog("/logs/agent/harness-stdout.txt")
    own.write(b"mine")
    await artifacts.keep(log, own)
    sandbox = FakeSandbox({"/logs/agent/harness-stdout.txt": 10})
    found = await artifacts.collect(sandbox, store, log)
    assert [(a.path, a.size_bytes) for a in found] == [("/logs/agent/harness-stdout.txt", 4)]


@pytest.mark.parametrize(
    "raw,shown",
    [
        ("1.0\x1b[2J\x1b[31m", "1.0\\x1b[2J\\x1b[31m"),
        ("a\x9b31mb", "a\\x9b31mb"),
        ("evil\u202etxt.exe", "evil\\u202etxt.exe"),
        ("two\nlines\r", "two\\nlines\\r"),
        ("\x07bell\x7f", "\\x07bell\\x7f"),
        ("plain é 名前", "plain é 名前"),
    ],
)
def test_clean__control_and_invisible_characters_are_shown_escaped(raw, shown):
    assert clean(raw) == shown


def test_clean__multiline_text_keeps_newlines_and_tabs_only():
    assert clean("a\n\tb\x1b\r", multiline=True) == "a\n\tb\\x1b\\r"


def test_safe_json__the_same_value_nothing_a_terminal_acts_on():
    value = {"v": "x\x1b[2J\x9b\u202e\u2028y é"}
    for text in (json.dumps(value, ensure_ascii=False), json.dumps(value)):
        safe = safe_json(text)
        assert json.loads(safe) == value
        assert not any(c in safe for c in "\x1b\x9b\u202e\u2028")
