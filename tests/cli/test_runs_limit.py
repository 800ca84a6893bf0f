"""hemra runs --limit: 1 to 100,000, read from the store page by page (its pages hold 1000)."""

import json

from typer.testing import CliRunner

from hemra.clients.cli import results
from hemra.clients.cli.main import app
from tests.e2e.helpers import hemra


def test_runs_limit__reads_page_by_page(hemra_env, tmp_path, monkeypatch):
    for _ in range(3):
        recorded = hemra(
            hemra_env, "run", "-H", "oracle", "-d", "hemra-offline", "-t", "hemra/text-stats", "--detach", cwd=tmp_path
        )
        assert recorded.returncode == 0, recorded.stderr
    monkeypatch.setenv("HEMRA_HOME", hemra_env["HEMRA_HOME"])
    monkeypatch.delenv("HEMRA_DATABASE_URL", raising=False)
    monkeypatch.setattr(results, "_RUNS_PAGE", 2)
    for limit, expected in ((1, 1), (2, 2), (3, 3), (5, 3)):
        result = CliRunner().invoke(app, ["runs", "--json", "--limit", str(limit)])
        assert result.exit_code == 0, result.output
        assert len(json.loads(result.output)) == expected


def test_runs_limit__out_of_range_one_line(hemra_env):
    for value, shown in (("0", "0"), ("100001", "100,001"), ("99999999999999999999", "99,999,999,999,999,999,999")):
        result = hemra(hemra_env, "runs", "--limit", value)
        assert result.returncode == 2
        assert result.stderr.strip() == f"error: --limit must be from 1 to 100,000 (got {shown})"
