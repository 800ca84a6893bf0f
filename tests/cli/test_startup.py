"""What a read command starts: on one machine `hemra runs`, `show`, `compare`, `cancel`, `export`
and `datasets list|show` start the store alone and import nothing of the other services
(a command's start-up is most of its time on a small store)."""

import json
import subprocess
import sys

from hemra.clients.cli.main import COMMANDS, _command_of, build
from hemra.services.compose import embedded
from hemra.v1 import store_service_pb2 as spb

PROBE = """
import json, sys
from hemra.clients.cli.main import main
sys.argv = ["hemra", *sys.argv[1:]]
try:
    main()
except SystemExit:
    pass
loaded = [m for m in ("hemra.services.executor.server", "hemra.services.planner.server", "hemra.services.importer.server",
                      "hemra.services.scorer.server", "numpy", "hemra.clients.cli.running", "hemra.clients.cli.serving",
                      "hemra.clients.cli.transfer", "hemra.clients.cli.judging", "pydantic") if m in sys.modules]
print(json.dumps(loaded), file=sys.stderr)
"""


def loaded_by(env: dict, *args: str) -> list[str]:
    done = subprocess.run([sys.executable, "-c", PROBE, *args], env=env, capture_output=True, text=True, timeout=120)
    return json.loads(done.stderr.strip().splitlines()[-1])


def test_read_commands_import_no_other_service(hemra_env):
    for command in (["runs"], ["datasets", "list"], ["--server=", "show", "--help"]):
        assert loaded_by(hemra_env, *command) == [], command


def test_plain_values_skip_typers_pydantic_check_and_others_keep_its_answers(hemra_env):
    """Typer's pydantic check is skipped only where it would give the value back unchanged:
    what it refuses or changes still goes through it, with its own message."""
    import typer
    from typer.testing import CliRunner

    from hemra.clients.cli import main

    app = typer.Typer()

    @app.command()
    def echo(number: int = 5, name: str = "x", flag: bool = False, bounded: int = typer.Option(3, min=1, max=9)):
        typer.echo(repr((number, name, flag, bounded)))

    main._plain_coercion()
    runner = CliRunner()
    ok = runner.invoke(app, ["--number", "42", "--name", "a b", "--flag", "--bounded", "4"])
    assert (ok.exit_code, ok.output) == (0, "(42, 'a b', True, 4)\n")
    assert runner.invoke(app, []).output == "(5, 'x', False, 3)\n"
    # Typer's own check: leading zeros, a sign, an out-of-range bound, not a number.
    assert runner.invoke(app, ["--number", "007"]).output == "(7, 'x', False, 3)\n"
    assert runner.invoke(app, ["--number", "-3"]).output == "(-3, 'x', False, 3)\n"
    for args, message in ((["--number", "abc"], "number"), (["--bounded", "10"], "bounded")):
        refused = runner.invoke(app, args)
        assert refused.exit_code == 2 and message in refused.output, refused.output


def test_the_command_named_is_the_one_built():
    assert _command_of(["runs", "--json"]) == "runs"
    assert _command_of(["--server", "https://h:1", "compare", "a", "b"]) == "compare"
    assert _command_of(["--server=https://h:1", "datasets", "list"]) == "datasets"
    for argv in ([], ["--help"], ["--version"], ["nosuch"], ["--server"]):
        assert _command_of(argv) is None, argv  # the whole app: its help, or its error
    [runs] = build("runs").registered_commands
    assert runs.callback.__module__ == "hemra.clients.cli.results"
    assert [c.name for c in build().registered_commands] == list(COMMANDS)


async def test_the_store_alone_starts_when_asked(tmp_path):
    async with embedded.services(tmp_path, only=("store",)) as services:
        assert set(services.addresses) == {"store"}
        assert services.planner is None and services.scorer is None and services.importer is None
        assert list((await services.store.ListRuns(spb.ListRunsRequest())).runs) == []
    async with embedded.services(tmp_path) as services:
        assert set(services.addresses) == {"store", "planner", "importer", "scorer"}


def test_the_orphan_sweep_loads_no_docker_sdk_where_no_engine_can_be(tmp_path):
    """Every executor sweeps orphans at start; without DOCKER_HOST or the local socket the
    engine's SDK (0.1 s of imports) is not loaded for it."""
    probe = (
        "import sys\n"
        "from hemra.services.executor import sandboxes\n"
        "sandboxes.docker_configured = lambda: False\n"
        "assert sandboxes.remove_orphans() == []\n"
        "print(sorted(m for m in ('docker', 'hemra.services.executor.sandboxes.docker') if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
