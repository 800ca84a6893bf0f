"""`hemra serve`'s gateway reads its own process's store servicer in process
(services/common/inprocess.py): every route answers byte for byte what it answers over loopback
gRPC, errors included, and nothing the gateway holds is the store's own object."""

from contextlib import asynccontextmanager

import httpx
import pytest

from hemra.gateway.app import create_app
from hemra.services.common import auth
from hemra.services.compose import embedded
from hemra.v1 import store_service_pb2 as spb
from tests.gateway.conftest import LABEL


@asynccontextmanager
async def _both(home):
    """Two gateways on one store: over loopback gRPC, and in process with the gateway's role."""
    async with embedded.services(home, only=("store",)) as services:
        local = services.store_in_process(auth.SENDS["gateway"])
        clients = []
        for store in (services.store, local):
            transport = httpx.ASGITransport(app=create_app(store))
            clients.append(httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1"))
        try:
            yield services, local, clients
        finally:
            for client in clients:
                await client.aclose()


async def _paths(client) -> list[str]:
    """A sample of every kind of route, errors too, for the recorded run."""
    attempts = (await client.get(f"/api/runs/{LABEL}/attempts")).json()["attempts"]
    oracle = next(a for a in attempts if a["harness_name"] == "oracle")["id"]
    dataset = (await client.get("/api/datasets")).json()["datasets"][0]["name"]
    return [
        "/api/ready",
        "/api/runs",
        "/api/runs?page_size=1",
        f"/api/runs/{LABEL}",
        f"/api/runs/{LABEL}/report",
        f"/api/runs/{LABEL}/attempts",
        f"/api/runs/{LABEL}/attempts?page_size=1",
        f"/api/runs/{LABEL}/usage",
        f"/api/runs/{LABEL}/mining",
        f"/api/attempts/{oracle}",
        f"/api/attempts/{oracle}/task",
        f"/api/attempts/{oracle}/events",
        f"/api/attempts/{oracle}/events?page_size=2&page_token=2",
        f"/api/attempts/{oracle}/events/1",
        "/api/datasets",
        f"/api/datasets/{dataset}/tasks",
        "/api/harnesses",
        "/api/scorers",
        "/api/judges",
        f"/api/compare?a={LABEL}/oracle&b={LABEL}/nop",
        # errors: no such run or attempt (404), a page token the store refuses (400)
        "/api/runs/no-such-run",
        "/api/runs/no-such-run/report",
        "/api/attempts/a-zzzzzzzzzzzz",
        f"/api/runs/{LABEL}/attempts?page_token=notatoken",
        "/api/runs?page_token=notatoken",
        f"/api/attempts/{oracle}/events/999999",
        "/api/compare?a=no-such-run&b=nor-this",
    ]


async def test_every_route_answers_byte_for_byte_as_over_grpc(gateway_home):
    async with _both(gateway_home) as (_, _, (wire, local)):
        paths = await _paths(wire)
        statuses = set()
        for _ in range(2):  # the second time from the store's caches of a settled run
            for path in paths:
                over_grpc, in_process = await wire.get(path), await local.get(path)
                assert in_process.status_code == over_grpc.status_code, path
                assert in_process.headers.get("content-type") == over_grpc.headers.get("content-type"), path
                assert in_process.content == over_grpc.content, path
                statuses.add(over_grpc.status_code)
    assert {200, 400, 404} <= statuses


async def test_an_answer_the_caller_changes_is_not_the_stores_next(gateway_home):
    """A settled run's report and attempts pages are kept by the store; the in-process client
    hands out copies, so changing one changes nothing the store answers next."""
    async with _both(gateway_home) as (services, local, _):
        await local.GetRun(spb.GetRunRequest(run=LABEL))  # seen settled: its pages are kept
        calls = [
            ("GetRunReport", spb.GetRunReportRequest(run=LABEL)),
            ("ListAttempts", spb.ListAttemptsRequest(parent=LABEL)),
            ("ListAttempts", spb.ListAttemptsRequest(parent=LABEL)),  # now from the kept page
            ("ListRuns", spb.ListRunsRequest()),
        ]
        for rpc, request in calls:
            expected = await getattr(services.store, rpc)(request)
            first = await getattr(local, rpc)(request)
            assert first == expected, rpc
            for field, _ in first.ListFields():
                first.ClearField(field.name)
            sent = type(request)()
            sent.CopyFrom(request)
            assert await getattr(local, rpc)(request) == expected, rpc
            assert request == sent, rpc  # nor does the servicer change the caller's request


@pytest.mark.parametrize("rpc", ["GetRunReport", "ListAttempts"])
async def test_the_same_answer_twice_is_two_objects(gateway_home, rpc):
    async with _both(gateway_home) as (_, local, _):
        await local.GetRun(spb.GetRunRequest(run=LABEL))
        request = getattr(spb, f"{rpc}Request")(**({"run": LABEL} if rpc == "GetRunReport" else {"parent": LABEL}))
        first, second = await getattr(local, rpc)(request), await getattr(local, rpc)(request)
        assert first == second and first is not second
