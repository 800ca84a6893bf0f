"""Page tokens and query parameters no caller should send (issue 12, item 7): never a 5xx.
Hand-picked values past every integer, in every script, then a bounded fuzz of each
page token and query parameter with hostile strings."""

import base64

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.gateway.conftest import LABEL

HUGE = ["9999999999999999999", "99999999999999999999999999", str(2**31), str(2**63), str(2**62), "0" * 19]
ODD = [
    "\u00b2",
    "\u0663",
    "-1",
    "1.5",
    "nan",
    "inf",
    "1e308",
    " ",
    "%00",
    "\x00",
    "a" * 99,
    "=",
    "====",
    "\U0001f600",
    "../../x",
]


def _b64(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


#: Tokens shaped like the store's own (base64 of "time/id", "name\x1fdigest", and of today's
#: versioned "p1\x1flist\x1f...") but hostile inside.
FORGED = [
    _b64("nan/r-0"),
    _b64("inf/"),
    _b64("1e999/x"),
    _b64("1" * 400 + "/x"),
    _b64("a\x1fb\x1fc"),
    _b64("\x00\x1f\x00"),
    _b64("x" * 600),
    _b64("p1\x1fruns\x1fnan\x1fr-0"),
    _b64("p1\x1fruns\x1f1e999\x1fx"),
    _b64("p1\x1fattempts\x1f../x"),
    _b64("p1\x1fevents\x1f" + "9" * 40),
    _b64("p1\x1ftasks\x1fa\x1fb\x1fc"),
    _b64("p9\x1fruns\x1f1.0\x1fr-0"),
]


async def _no_server_error(client, path: str, **params) -> int:
    response = await client.get(path, params=params)
    assert response.status_code < 500, (path, params, response.status_code, response.text[:300])
    return response.status_code


@pytest.fixture
async def attempt_id(attempts) -> str:
    return attempts[0]["id"]


async def test_events_page_token_past_any_integer(client, attempt_id):
    for token in HUGE:
        status = await _no_server_error(client, f"/api/attempts/{attempt_id}/events", page_token=token)
        assert status in (200, 422)
    response = await client.get(f"/api/attempts/{attempt_id}/events", params={"page_token": "9999999999999999999"})
    assert response.status_code == 200 and response.json()["events"] == []


async def test_every_page_token_and_query_parameter__hand_picked(client, attempt_id):
    paths = {
        f"/api/attempts/{attempt_id}/events": ["page_token", "page_size", "preview"],
        "/api/runs": ["page_token", "page_size", "kind"],
        f"/api/runs/{LABEL}/attempts": ["page_token", "page_size", "cell", "task", "harness", "verdict"],
        "/api/datasets/hemra-offline/tasks": ["page_token", "page_size"],
        "/api/compare": ["a", "b", "judge"],
    }
    for path, names in paths.items():
        for name in names:
            for value in HUGE + ODD + FORGED:
                params = {"a": LABEL, "b": LABEL} if path == "/api/compare" else {}
                await _no_server_error(client, path, **{**params, name: value})


async def test_event_seq_and_stream_positions_past_any_integer(client, attempt_id):
    for seq in HUGE + ["-1", "0", "\u0663"]:
        await _no_server_error(client, f"/api/attempts/{attempt_id}/events/{seq}")
    for after in HUGE[:3]:
        await _no_server_error(client, f"/api/attempts/{attempt_id}/events/stream", after=after)
    for last in ["\u00b2".encode("latin-1"), "\u00b2".encode(), b"9" * 18, "\u0663".encode()]:
        response = await client.get(f"/api/attempts/{attempt_id}/events/stream", headers={"Last-Event-ID": last})
        assert response.status_code < 500


_TEXT = st.characters(blacklist_categories=("Cs",))
TOKENS = st.one_of(
    st.text(_TEXT, max_size=120),
    st.integers(min_value=-(2**70), max_value=2**70).map(str),
    st.text(_TEXT, max_size=300).map(_b64),
    st.sampled_from(HUGE + ODD + FORGED),
)


async def test_page_tokens__fuzzed(client, attempt_id):
    import asyncio

    failures = []
    paths = [
        f"/api/attempts/{attempt_id}/events",
        "/api/runs",
        f"/api/runs/{LABEL}/attempts",
        "/api/datasets/hemra-offline/tasks",
    ]
    values = []

    @given(token=TOKENS, path=st.sampled_from(paths))
    @settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    def collect(token, path):
        values.append((path, token))

    collect()
    for path, token in values:
        response = await client.get(path, params={"page_token": token})
        if response.status_code >= 500:
            failures.append((path, token, response.status_code, response.text[:200]))
        await asyncio.sleep(0)
    assert not failures, failures
