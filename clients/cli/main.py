"""The `hemra` command."""

import typer

from clients.cli import (
    comparing,
    connect,
    database,
    datasets,
    harness,
    judging,
    results,
    running,
    serving,
    transfer,
)

app = typer.Typer(
    name="hemra",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    help="Run AI agent harnesses on pinned benchmark tasks, score each attempt with the "
    "benchmark's own scorer, and compare harnesses task by task.",
)
app.command()(running.run)
app.command()(running.cancel)
app.command()(results.runs)
app.command()(results.show)
app.command()(comparing.compare)
app.command()(judging.judge)
app.command("import")(transfer.import_)
app.command()(transfer.export)
app.command()(serving.serve)
app.command()(serving.worker)
app.command()(serving.health)
app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})(serving.service)
app.add_typer(datasets.app, name="datasets")
app.add_typer(harness.app, name="harness")
app.add_typer(database.app, name="db")


def version_callback(value: bool) -> None:
    if value:
        from importlib.metadata import version

        typer.echo(f"hemra {version('hemra')}")
        raise typer.Exit()


@app.callback()
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
) -> None:
    """HEMRA: compare agent harnesses, task by task, fairly."""
    connect.server_option = server


def main() -> None:
    app()


if __name__ == "__main__":
    main()
