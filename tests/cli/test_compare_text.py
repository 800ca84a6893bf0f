"""hemra compare in text: the store sends only the per-task rows the text prints, and the
counts of the rest; the report's "vs baseline" is points of pass rate."""

import json

from typer.testing import CliRunner

from hemra.clients.cli import comparing
from hemra.clients.cli.main import app
from tests.e2e.helpers import hemra


def test_compare_text__receives_only_the_rows_it_prints(hemra_env, tmp_path, monkeypatch):
    tasks = ("-t", "fix-*", "-t", "text-stats", "-t", "reverse-lines")
    ran = hemra(hemra_env, "run", "-H", "oracle", "-H", "nop", "-d", "hemra-offline", *tasks, "--label", "two")
    assert ran.returncode == 0, ran.stderr
    monkeypatch.setenv("HEMRA_HOME", hemra_env["HEMRA_HOME"])
    monkeypatch.delenv("HEMRA_DATABASE_URL", raising=False)
    monkeypatch.setattr(comparing, "SHOWN", 1)
    received = []
    printed = comparing.print_comparison
    monkeypatch.setattr(comparing, "print_comparison", lambda c: (received.append(c), printed(c)))

    text = CliRunner().invoke(app, ["compare", "two/oracle", "two/nop"])
    assert text.exit_code == 0, text.output
    [comparison] = received
    flips = comparison.list_lengths["flipped_to_fail"]
    assert len(comparison.tasks) == 1 and len(comparison.flipped_to_fail) == 1 < flips
    assert comparison.list_lengths["tasks"] == 4
    assert f"flipped to fail (a 1 -> b 0) ({flips}):" in text.output
    assert f"... and {flips - 1} more (--json lists all)" in text.output

    whole = CliRunner().invoke(app, ["compare", "two/oracle", "two/nop", "--json"])
    assert whole.exit_code == 0, whole.output
    compared = json.loads(whole.output)
    assert len(compared["tasks"]) == 4 and len(compared["flipped_to_fail"]) == flips

    report = CliRunner().invoke(app, ["compare", "two", "--json"])
    [nop] = [r for r in json.loads(report.output)["datasets"][0]["rows"] if r["harness_name"] == "nop"]
    assert nop["vs_baseline"]["delta_points"] == -100.0
