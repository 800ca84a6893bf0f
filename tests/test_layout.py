"""Imports point one way (docs/architecture.md): clients -> services -> services/common and
the contracts; the gateway reads the store through the transport only."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def imported(folder: str) -> list[tuple[str, str]]:
    """(file, module) for every import in the Python files under `folder`, lazy ones included."""
    found = []
    for path in sorted((ROOT / folder).rglob("*.py")):
        if "_pb2" in path.name:
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                found += [(str(path.relative_to(ROOT)), alias.name) for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                found += [(str(path.relative_to(ROOT)), node.module)]
                # `from hemra import services` and `from hemra.services import digests` import
                # packages and modules, not names.
                if node.module in ("hemra", "hemra.services"):
                    found += [(str(path.relative_to(ROOT)), f"{node.module}.{alias.name}") for alias in node.names]
    return found


def offenders(folder: str, forbidden) -> list[str]:
    return [f"{file}: {module}" for file, module in imported(folder) if forbidden(module)]


def test_services_never_import_clients():
    assert offenders("services", lambda m: m == "hemra.clients" or m.startswith("hemra.clients.")) == []


def test_the_planner_never_imports_the_executor():
    assert offenders("services/planner", lambda m: m.startswith("hemra.services.executor")) == []


@pytest.mark.parametrize("folder", ["services/common", "services/domain", "services/environments"])
def test_shared_modules_import_no_service(folder):
    services = tuple(f"hemra.services.{name}" for name in ("store", "planner", "executor", "scorer", "importer"))
    assert offenders(folder, lambda m: m.startswith(services)) == []


def test_the_gateway_reaches_services_through_the_transport_only():
    # auth: the credentials every server checks, the gateway's front door too.
    shared = ("hemra.services.common", "hemra.services.domain", "hemra.services.common.auth")
    assert offenders("gateway", lambda m: m.startswith("hemra.services.") and not m.startswith(shared)) == []
    assert offenders("gateway", lambda m: m.startswith("hemra.clients.")) == []


def test_the_checker_sees_lazy_imports():
    """The rules above would pass on a reader that missed imports inside functions."""
    assert ("services/executor/sandboxes/__init__.py", "hemra.services.executor.sandboxes.docker") in imported(
        "services"
    )


def test_only_the_composition_roots_wire_several_services():
    """A service's server or servicer is built beside another service's only where shapes are
    composed (the embedded default, hemra worker)."""
    wired = {}
    for file, module in imported("services"):
        if module.endswith((".server", ".servicer")) and module.count(".") == 3:
            wired.setdefault(file, set()).add(module.split(".")[2])
    several = {file for file, services in wired.items() if len(services) > 1}
    assert several == {"services/compose/embedded.py", "services/compose/worker.py"}


@pytest.mark.parametrize("folder", ["clients", "gateway"])
def test_clients_build_no_server(folder):
    """hemra serve and hemra worker are wired in services/compose, not in the CLI."""
    assert offenders(folder, lambda m: m.startswith("hemra.services.") and m.endswith((".server", ".servicer"))) == []
