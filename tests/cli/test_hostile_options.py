"""Ports and seconds no option should take (issue 31, item 9): one line and exit 2, at once.
gRPC took port 99999 silently as 34463 (modulo 65536); `hemra db wait --timeout nan` never
returned (NaN compares false with every bound)."""

import time

import pytest
from typer.testing import CliRunner

from hemra.clients.cli.main import app


@pytest.fixture(autouse=True)
def private_home(tmp_path, monkeypatch):
    monkeypatch.setenv("HEMRA_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("HEMRA_DATABASE_URL", raising=False)
    monkeypatch.setenv("HEMRA_TOKEN", "a-token")


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["serve", "--listen", "127.0.0.1:99999"], "--listen '127.0.0.1:99999': the port must be from 0 to 65535"),
        (
            ["serve", "--store-listen", "127.0.0.1:65536"],
            "--store-listen '127.0.0.1:65536': the port must be from 0 to 65535",
        ),
        (["serve", "--listen", "127.0.0.1:-1"], "--listen '127.0.0.1:-1': expected HOST:PORT"),
        (["serve", "--listen", "127.0.0.1"], "--listen '127.0.0.1': expected HOST:PORT"),
        (
            ["service", "store", "--listen", "127.0.0.1:99999"],
            "--listen '127.0.0.1:99999': the port must be from 0 to 65535",
        ),
        (["service", "store", "--listen=[::1]:1e3"], "--listen '[::1]:1e3': expected HOST:PORT"),
        (
            ["service", "gateway", "--listen", "127.0.0.1:99999"],
            "--listen '127.0.0.1:99999': the port must be from 0 to 65535",
        ),
        (
            ["service", "gateway", "--front-door=127.0.0.1:99999"],
            "--front-door '127.0.0.1:99999': the port must be from 0 to 65535",
        ),
        (["worker", "--store", "127.0.0.1:99999"], "--store '127.0.0.1:99999': the port must be from 1 to 65535"),
        (["worker", "--store", ":7801"], "--store ':7801': expected HOST:PORT"),
        (["health", "127.0.0.1:0"], "ADDRESS '127.0.0.1:0': the port must be from 1 to 65535"),
        (["health", "127.0.0.1:" + "9" * 5000], f"ADDRESS '127.0.0.1:{'9' * 87}...': expected HOST:PORT"),
        (["db", "wait", "--store", "127.0.0.1:70000"], "--store '127.0.0.1:70000': the port must be from 1 to 65535"),
        (["db", "wait", "--timeout", "nan"], "--timeout must be a number of seconds more than 0 (got nan)"),
        (["db", "wait", "--timeout", "inf"], "--timeout must be a number of seconds more than 0 (got inf)"),
        (["db", "wait", "--timeout", "-1"], "--timeout must be a number of seconds more than 0 (got -1)"),
        (["db", "wait", "--timeout", "0"], "--timeout must be a number of seconds more than 0 (got 0)"),
    ],
)
def test_bad_port_or_seconds__one_line_exit_2_at_once(args, line):
    started = time.monotonic()
    result = CliRunner().invoke(app, args)
    assert (result.exit_code, result.output) == (2, f"error: {line}\n")
    assert time.monotonic() - started < 10


def test_good_ports__accepted(tmp_path):
    # A port in range passes the check: `health` then asks the address (nothing listens: exit 1).
    result = CliRunner().invoke(app, ["health", "127.0.0.1:1"])
    assert result.exit_code == 1 and "port" not in result.output
