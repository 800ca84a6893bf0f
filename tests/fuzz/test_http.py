"""The gateway's HTTP API, fuzzed against the fuzz deployment's real uvicorn: every GET route
in gateway/openapi.json with path and query parameters built from real ids (a run, an attempt,
a dataset, an event's seq, a blob) bent out of shape or replaced by hostile values; and the
whole API from its OpenAPI document (schemathesis). Never a 5xx; a 4xx says what in one line;
afterwards the store still reads."""

import json
import re
import urllib.parse

import httpx
import pytest
import schemathesis
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import REPO
from tests.fuzz.deployment import still_reads
from tests.fuzz.messages import strings
from tests.fuzz.mutate import ODD_STRINGS, examples
from tests.fuzz.test_frontdoor import door, known  # noqa: F401  (fixtures)

OPENAPI = json.loads((REPO / "gateway" / "openapi.json").read_text())
GETS = sorted(path for path, operations in OPENAPI["paths"].items() if "get" in operations)
#: Routes that stream until the client goes (server-sent events): asked with a short read.
STREAMS = {"/api/attempts/{attempt}/events/stream"}


def _parameters(path: str) -> list[dict]:
    return OPENAPI["paths"][path]["get"].get("parameters", [])


def _values(parameter: dict, known_strings: list[str]):
    numbers = st.integers(-(2**70), 2**70).map(str) | st.sampled_from(["0", "1", "2", "-1", "1e308", "nan", "0x10"])
    if parameter.get("schema", {}).get("type") == "integer":
        return numbers | ODD_STRINGS
    return strings(known_strings) | numbers


@pytest.fixture(scope="module")
def known_strings(known) -> list[str]:
    return [*known.strings, f"{known.run}/oracle", f"{known.run}/nop", "1", "2"]


@pytest.fixture(scope="module")
def client(deployment):
    """One client for the module (a new one per request costs more than the request)."""
    with httpx.Client(base_url=deployment.http, timeout=30) as client:
        yield client


@pytest.mark.parametrize("path", GETS)
def test_get_route__fuzzed(deployment, door, client, known_strings, path):  # noqa: F811
    parameters = _parameters(path)
    in_path = {p["name"]: _values(p, known_strings) for p in parameters if p["in"] == "path"}
    in_query = {p["name"]: _values(p, known_strings) for p in parameters if p["in"] == "query"}
    failures = []

    @given(
        path_values=st.fixed_dictionaries(in_path),
        query=st.fixed_dictionaries({}, optional=in_query),
    )
    @settings(max_examples=examples(10 if parameters else 2))
    def check(path_values, query):
        url = re.sub(r"\{(\w+)\}", lambda m: _segment(path_values[m.group(1)]), path)
        try:
            if path in STREAMS:
                with client.stream("GET", url, params=query, timeout=2) as response:
                    status, body = response.status_code, b"" if response.status_code < 300 else response.read()
            else:
                response = client.get(url, params=query)
                status, body = response.status_code, response.content
        except httpx.ReadTimeout:
            return  # a stream that stays open: no error
        except httpx.InvalidURL:
            return  # a URL no client can send (httpx refuses it before it leaves)
        if status >= 500:
            failures.append((url, query, status, body[:300]))
        elif status >= 400:
            detail = _detail(body)
            assert detail and "\n" not in detail.strip(), (url, query, status, body[:300])

    check()
    assert not failures, failures[:5]


def _segment(value: str) -> str:
    """A path segment as a client would send it (quoted; a "/" in a value stays a separator)."""
    return urllib.parse.quote(value, safe="/") or "%20"


def _detail(body: bytes) -> str:
    try:
        data = json.loads(body)
    except ValueError:
        return body.decode(errors="replace")
    detail = data.get("detail") if isinstance(data, dict) else data
    return detail if isinstance(detail, str) else json.dumps(detail)[:500]


def test_openapi_operations__no_server_errors(deployment):
    """Schemathesis's own strategies from the OpenAPI document, every operation."""
    schema = schemathesis.openapi.from_url(f"{deployment.http}/api/openapi.json")
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 10
    failures = []
    for operation in operations:

        @given(case=operation.as_strategy())
        @settings(max_examples=examples(10))
        def check(case):
            response = case.call(base_url=deployment.http, timeout=30)
            if response.status_code >= 500:
                failures.append(
                    (case.method, case.formatted_path, case.query, response.status_code, response.text[:300])
                )

        check()
    assert not failures, failures


def test_the_store_still_reads_after_the_batch(door, deployment):  # noqa: F811
    still_reads(door, deployment.http)
