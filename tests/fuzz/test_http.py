"""Fuzz the API from its OpenAPI document (schemathesis) against a real uvicorn: no 5xx."""

import schemathesis  # noqa: E402  (a dev dependency: fuzzing is not optional)
from hypothesis import HealthCheck, given, settings  # noqa: E402

EXAMPLES = 30


def test_no_server_errors(live_server):
    schema = schemathesis.openapi.from_url(f"{live_server}/api/openapi.json")
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 10
    failures = []
    for operation in operations:

        @given(case=operation.as_strategy())
        @settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), database=None)
        def check(case):
            response = case.call(base_url=live_server, timeout=30)
            if response.status_code >= 500:
                failures.append(
                    (case.method, case.formatted_path, case.query, response.status_code, response.text[:300])
                )

        check()
    assert not failures, failures
