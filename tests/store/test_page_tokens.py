"""Page tokens (services/store/pagetokens.py): one versioned format for every list, read back
only as the store wrote it, on SQLite and PostgreSQL alike. float() reads "nan", "inf" and "-1";
SQLite compared NaN as NULL (an empty page) and PostgreSQL sorted it past every time (the first
page again). A token of another list, another version or a bare ID is refused by name."""

import base64

import grpc
import pytest

from hemra.v1 import store_service_pb2 as spb
from tests.store.test_hostile_rpc import served  # noqa: F401  (a fixture)
from tests.store.test_queue import plan

RUN_ID = "r-01m94vh2662kg96p2m"


def _b64(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def _token(text: str) -> str:
    """A runs token around "time/ID" as the store writes one: only its position is hostile."""
    return _b64("\x1f".join(["p1", "runs", *text.split("/", 1)]))


HOSTILE = [
    f"nan/{RUN_ID}",
    f"NaN/{RUN_ID}",
    f"-nan/{RUN_ID}",
    f"inf/{RUN_ID}",
    f"-inf/{RUN_ID}",
    f"1e999/{RUN_ID}",
    f"-1/{RUN_ID}",
    f"-0.5/{RUN_ID}",
    f"1_000/{RUN_ID}",
    f" 5/{RUN_ID}",
    "5/",
    "5/not-an-id",
    f"5/{RUN_ID}/../x",
]


@pytest.mark.parametrize("text", HOSTILE)
async def test_runs_page_token__nan_negative_or_not_ours__invalid_argument(text, served):  # noqa: F811
    store, stub = served
    await store.record_run(plan(trials=1, label="one"))
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await stub.ListRuns(spb.ListRunsRequest(page_size=10, page_token=_token(text)))
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert caught.value.details() == f"malformed page token {_token(text)[:40]!r}"


async def test_runs_page_token__the_stores_own_still_pages_through_every_run(served):  # noqa: F811
    store, stub = served
    for label in ("a", "b", "c"):
        await store.record_run(plan(trials=1, label=label))
    seen, token = [], ""
    while True:
        page = await stub.ListRuns(spb.ListRunsRequest(page_size=1, page_token=token))
        seen += [run.label for run in page.runs]
        token = page.next_page_token
        if not token:
            break
    assert sorted(seen) == ["a", "b", "c"] and len(seen) == 3


async def _refused(call, token: str) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call(token)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert caught.value.details() == f"malformed page token {token[:40]!r}"


async def test_every_list_pages_with_its_own_token_and_refuses_the_others(served):  # noqa: F811
    store, stub = served
    run, _ = await store.record_run(plan(trials=3, label="three"))
    first = await stub.ListAttempts(spb.ListAttemptsRequest(parent=f"runs/{run.id}", page_size=1))
    attempt_id = first.attempts[0].id
    token = first.next_page_token
    assert token and attempt_id not in token  # opaque: not the raw ID it once was
    rest = await stub.ListAttempts(spb.ListAttemptsRequest(parent=f"runs/{run.id}", page_size=10, page_token=token))
    assert len(rest.attempts) == 2 and attempt_id not in {a.id for a in rest.attempts}

    def attempts(t):
        return stub.ListAttempts(spb.ListAttemptsRequest(parent=f"runs/{run.id}", page_token=t))

    def runs(t):
        return stub.ListRuns(spb.ListRunsRequest(page_token=t))

    def events(t):
        return stub.ListEvents(spb.ListEventsRequest(parent=f"attempts/{attempt_id}", page_token=t))

    await _refused(attempts, attempt_id)  # a raw ID, the old attempts token
    await _refused(runs, token)  # an attempts token given to another list
    await _refused(events, token)
    await _refused(attempts, _b64(f"p2\x1fattempts\x1f{attempt_id}"))  # another version
    await _refused(attempts, _b64("p1\x1fattempts\x1fr-01m94vh2662kg96p2m"))  # not an attempt's ID
    await _refused(events, _b64("p1\x1fevents\x1f-1"))
    await _refused(events, _b64("events-after-1"))  # the old events token
