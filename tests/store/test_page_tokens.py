"""Page tokens of the runs list (issue 31, item 9): read back only as the store wrote them, on
SQLite and PostgreSQL alike. float() reads "nan", "inf" and "-1"; SQLite compared NaN as NULL
(an empty page) and PostgreSQL sorted it past every time (the first page again)."""

import base64

import grpc
import pytest

from hemra.v1 import store_service_pb2 as spb
from tests.store.test_hostile_rpc import served  # noqa: F401  (a fixture)
from tests.store.test_queue import plan

RUN_ID = "r-01m94vh2662kg96p2m"


def _token(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


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
