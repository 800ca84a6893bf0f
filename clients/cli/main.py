"""The `hemra` command."""

import importlib
import re
import sys

import typer

#: Each command's module and function, in the order `hemra --help` lists them. A command's
#: module is imported only when it runs: start-up is most of a read command's time.
COMMANDS = {
    "run": ("running", "run"),
    "try": ("running", "try_"),
    "cancel": ("running", "cancel"),
    "resume": ("repairing", "resume"),
    "repair": ("repairing", "repair"),
    "runs": ("results", "runs"),
    "show": ("results", "show"),
    "compare": ("comparing", "compare"),
    "judge": ("judging", "judge"),
    "import": ("transfer", "import_"),
    "export": ("transfer", "export"),
    "serve": ("serving", "serve"),
    "worker": ("serving", "worker"),
    "health": ("serving", "health"),
    "service": ("serving", "service"),
}
#: An int's value typer's check would give back as int(value): digits, no sign, no leading zero.
_DECIMAL = re.compile(r"0|[1-9][0-9]{0,17}")
#: Groups of commands: name -> module holding their Typer app.
GROUPS = {"datasets": "datasets", "harness": "harness", "db": "database"}
#: `hemra service NAME ...` hands its arguments to the service's own parser.
PASS_THROUGH = {"service": {"allow_extra_args": True, "ignore_unknown_options": True}}


def _plain_coercion() -> None:
    """Typer checks every str, int and bool parameter with a pydantic TypeAdapter: importing
    pydantic and building the adapters is about a third of a read command's start-up (python -X
    importtime). A value that is already of the parameter's type, or a plain decimal string for
    an int with no bounds, comes out of that check unchanged (int() of it), so it is taken as is;
    anything else (a bad value, bounds, other types) goes to typer's own check, with its
    messages. Left alone when typer's internals are not the ones this knows."""
    try:
        from typer import _coercion, core
    except ImportError:
        return
    original = getattr(core, "build_runtime_param", None)
    base = getattr(_coercion, "RuntimeParam", None)
    if original is None or base is None or getattr(original, "hemra_plain", False):
        return

    class Plain(base):
        def __init__(self, descriptor):
            object.__setattr__(self, "parameter_info", descriptor.parameter_info)
            object.__setattr__(self, "annotation", descriptor.annotation)
            object.__setattr__(self, "_descriptor", descriptor)
            object.__setattr__(self, "_full", None)

        def _coerce_value(self, value, param, ctx):
            if type(value) is self.annotation:
                return value
            if self.annotation is int and type(value) is str and _DECIMAL.fullmatch(value):
                return int(value)
            if self._full is None:
                object.__setattr__(self, "_full", original(self._descriptor))
            return self._full._coerce_value(value, param=param, ctx=ctx)

    def build_runtime_param(descriptor):
        info = descriptor.parameter_info
        if (
            descriptor.annotation in (str, int, bool)
            and descriptor.file_annotation is None
            and getattr(info, "parser", None) is None
            and getattr(info, "min", None) is None
            and getattr(info, "max", None) is None
        ):
            return Plain(descriptor)
        return original(descriptor)

    build_runtime_param.hemra_plain = True
    core.build_runtime_param = build_runtime_param


def build(only: str | None = None) -> typer.Typer:
    """The `hemra` app with every command, or only the one named (what `main` runs)."""
    _plain_coercion()
    app = typer.Typer(
        name="hemra",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        help="Run AI agent harnesses on pinned benchmark tasks, score each attempt with the "
        "benchmark's own scorer, and compare harnesses task by task.",
    )
    app.callback()(main_options)
    for name, (module, function) in COMMANDS.items():
        if only in (None, name):
            settings = PASS_THROUGH.get(name)
            app.command(name, context_settings=settings)(getattr(_module(module), function))
    for name, module in GROUPS.items():
        if only in (None, name):
            app.add_typer(_module(module).app, name=name)
    return app


def _module(name: str):
    return importlib.import_module(f"hemra.clients.cli.{name}")


def _command_of(argv: list[str]) -> str | None:
    """The command `argv` names, when nothing before it asks for more than that command
    (--help, --version, a mistake: those get the whole app)."""
    args = iter(argv)
    for arg in args:
        if arg == "--server":
            next(args, None)
        elif not arg.startswith("--server=") and arg != "--offline":
            return arg if arg in COMMANDS or arg in GROUPS else None
    return None


def __getattr__(name: str):
    if name == "app":  # the whole app, for typer's test runner and documentation checks
        return build()
    raise AttributeError(name)


def version_callback(value: bool) -> None:
    if value:
        from importlib.metadata import version

        typer.echo(f"hemra {version('hemra')}")
        raise typer.Exit()


def main_options(
    version: bool = typer.Option(
        False, "--version", callback=version_callback, is_eager=True, help="Print the version and exit."
    ),
    server: str | None = typer.Option(
        None,
        "--server",
        metavar="URL",
        help="A deployment's gateway (https://HOST:PORT): commands work there, not on the local store. "
        "Default: HEMRA_SERVER.",
    ),
    offline: bool = typer.Option(
        False,
        "--offline",
        help="Fetch nothing (agent CLIs from npm, registry and Hugging Face datasets, Docker base images): "
        "what would be fetched fails instead, naming it. Default: HEMRA_OFFLINE=1. A deployment's services "
        "read HEMRA_OFFLINE from their own environment.",
    ),
) -> None:
    """HEMRA: compare agent harnesses, task by task, fairly."""
    from hemra.clients.cli import connect

    connect.server_option = server
    if offline:  # read by the services this command starts in its own process
        import os

        from hemra.services.common import offline as offline_mode

        os.environ[offline_mode.VAR] = "1"


def main() -> None:
    build(_command_of(sys.argv[1:]))()


if __name__ == "__main__":
    main()
