"""The committed OpenAPI document matches the app."""

import json

from hemra.gateway import export_openapi


def test_openapi_document_is_current():
    committed = export_openapi.DOCUMENT.read_text()
    assert committed == export_openapi.document(), (
        "gateway/openapi.json is stale: run `python -m hemra.gateway.export_openapi` and commit it"
    )


def test_only_get_operations_with_stable_ids():
    paths = json.loads(export_openapi.document())["paths"]
    operations = [(method, op["operationId"]) for item in paths.values() for method, op in item.items()]
    assert {method for method, _ in operations} == {"get"}
    assert len({op for _, op in operations}) == len(operations)
