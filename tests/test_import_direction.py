"""The package graph points one way: each service -> services/domain -> services/common, never
back, and no service imports another service's modules (docs/architecture.md). A service
talks to another over gRPC, through the transport; what two services both need lives in
services/domain (records, rules, formats) or services/common (transport, errors, parsers).

There is no allowlist of violations: a new edge between two services fails here.
"""

from tests.test_layout import imported

#: The services: each a gRPC server of its own (services/<name>/server.py).
SERVICES = ("executor", "importer", "planner", "scorer", "store")
#: Packages and modules any service may import, and why:
#: - common, domain: shared by design (see the module docstring);
#: - environments: the sandbox-environment library (capabilities, image builds, the Docker
#:   engine client) that the planner and the executor both drive; it runs no server;
#: - bulk, digests, envtemplate: single-module helpers (bulk inserts, the
#:   digest rules, environment templating) that import no service.
SHARED = ("common", "domain", "environments", "bulk", "digests", "envtemplate")
#: The composition roots (services/compose: one module per deployment shape): they build the
#: servers, so they import them all.
ROOTS = ("compose",)


def _target(module: str) -> str:
    """The services package or module an import names ("" outside services)."""
    parts = module.split(".")
    return parts[2] if parts[:2] == ["hemra", "services"] and len(parts) > 2 else ""


def _owner(file: str) -> str:
    """The services package a file belongs to (services/store/queue.py -> store)."""
    parts = file.split("/")
    return parts[1] if len(parts) > 2 else parts[1].removesuffix(".py")


def edges() -> list[tuple[str, str, str]]:
    """(importing package, imported package, "file: module") for every import between two
    different packages of services/."""
    found = []
    for file, module in imported("services"):
        src, dst = _owner(file), _target(module)
        if dst and dst != src:
            found.append((src, dst, f"{file}: {module}"))
    return found


def test_every_package_is_classified():
    """A new package under services/ must be named a service, shared or a root here."""
    known = set(SERVICES) | set(SHARED) | set(ROOTS) | {"__init__"}
    assert {src for src, _, _ in edges()} | {dst for _, dst, _ in edges()} <= known


def test_no_service_imports_another_service():
    assert [where for src, dst, where in edges() if src in SERVICES and dst in SERVICES] == []


def test_domain_imports_no_service():
    assert [where for src, dst, where in edges() if src == "domain" and dst in SERVICES] == []


def test_common_imports_nothing_else_of_services():
    """services/common is the bottom of the graph: domain builds on it, so common importing
    domain (or any other package of services/) would be an edge pointing back up."""
    assert [where for src, dst, where in edges() if src == "common"] == []


def test_shared_packages_import_no_service():
    shared = set(SHARED) - {"domain"}
    assert [where for src, dst, where in edges() if src in shared and dst in SERVICES] == []


def test_only_the_roots_import_services_from_outside():
    """What is neither a service nor a root (shared code) never reaches into a service."""
    outside = [where for src, dst, where in edges() if src not in SERVICES + ROOTS and dst in SERVICES]
    assert outside == []


def test_the_check_sees_an_edge_between_services():
    """The rules above would pass on a reader that saw no edges at all: the composition root's
    imports of every service are seen."""
    assert {dst for src, dst, _ in edges() if src == "compose"} >= set(SERVICES)
    assert ("domain", "common") in {(src, dst) for src, dst, _ in edges()}
