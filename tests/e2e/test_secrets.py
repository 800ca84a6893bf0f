"""Secrets are named, never stored: a canary value a harness reads never reaches the store."""

from pathlib import Path

import pytest

from tests.e2e.helpers import copy_task, hemra, show

pytestmark = pytest.mark.slow
CANARY = "hemra-canary-7f3c9e1d2b"


def test_secret__used_by_harness_and_verifier_never_stored(hemra_env, tmp_path):
    (tmp_path / "harnesses").mkdir()
    (tmp_path / "harnesses" / "keyed.toml").write_text(
        'kind = "program"\ncommand = ["bash", "keyed.sh"]\nenv = ["HEMRA_TEST_API_KEY"]\n'
    )
    # The harness uses the key (checks it) without printing it.
    (tmp_path / "harnesses" / "keyed.sh").write_text(
        '[ "$HEMRA_TEST_API_KEY" = "' + CANARY + '" ] || exit 9\n'
        "hemra harness exec 'tac /app/data/steps.txt > /app/reversed.txt'\n"
    )
    copy_task("reverse-lines", tmp_path / "ds")
    (tmp_path / "run.toml").write_text(
        'name = "keyed"\nharnesses = ["keyed"]\ndatasets = ["./ds"]\n[verifier]\nenv = ["TEST_VERIFIER_KEY"]\n'
    )
    # The verifier's is not a HEMRA_ name: HEMRA's own variables are never passed to a task.
    env = dict(hemra_env, HEMRA_TEST_API_KEY=CANARY, TEST_VERIFIER_KEY=CANARY)
    result = hemra(env, "run", str(tmp_path / "run.toml"))
    assert result.returncode == 0, result.stderr
    [attempt] = show(env, "keyed")["attempts"]
    assert attempt["score"]["rewards"] == {"reward": 1.0}  # the harness saw the key
    assert CANARY not in result.stdout + result.stderr
    home = Path(env["HEMRA_HOME"])
    scanned = 0
    for path in home.rglob("*"):
        if path.is_file():
            scanned += 1
            assert CANARY.encode() not in path.read_bytes(), path
    assert scanned > 10  # the database, its WAL and the blobs were all read
    assert "TEST_VERIFIER_KEY" in show(env, "keyed")["run"]["spec"]["verifier_env"]
