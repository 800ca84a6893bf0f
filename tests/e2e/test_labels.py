"""Run labels: a run without one is labelled by its harnesses, datasets and time, and a label
several runs carry names the newest, which `show`, `compare` and `cancel` say."""

import json
import re
import time

from tests.e2e.helpers import hemra, runs

ONE_TASK = ("-d", "hemra-offline", "-t", "hemra/reverse-lines")


def test_default_labels__name_harnesses_datasets_and_time(hemra_env):
    for _ in range(2):
        result = hemra(hemra_env, "run", "-H", "oracle", "-H", "nop", *ONE_TASK)
        assert result.returncode == 0, result.stderr
        time.sleep(1.1)  # the label's time is to the second
    labels = [r["label"] for r in runs(hemra_env)]
    assert len(set(labels)) == 2, labels
    assert all(re.fullmatch(r"oracle\+nop_hemra-offline_\d{4}-\d{6}", label) for label in labels), labels
    assert labels[0] in result.stdout.splitlines()[0]  # the run header names it


def test_a_label_several_runs_carry__commands_say_which_run_they_took(hemra_env):
    for harness in ("nop", "oracle"):
        assert hemra(hemra_env, "run", "-H", harness, *ONE_TASK, "--label", "twice").returncode == 0
    newest = runs(hemra_env)[0]["id"]
    note = f"'twice': 2 runs or imports carry that label; it names the newest, {newest}"
    shown = hemra(hemra_env, "show", "twice")
    assert shown.returncode == 0 and note in shown.stderr, shown.stderr
    assert json.loads(shown.stdout)["run"]["id"] == newest
    compared = hemra(hemra_env, "compare", "twice/oracle", f"{newest}/oracle", "--json")
    assert compared.returncode == 0, compared.stderr
    assert "'twice/oracle': 2 runs or imports carry that label" in compared.stderr
    sides = json.loads(compared.stdout)
    assert (sides["a"]["label_matches"], sides["a"]["run_id"]) == (2, newest)
    # By ID: nothing to say.
    alone = hemra(hemra_env, "show", newest)
    assert alone.returncode == 0 and "note:" not in alone.stderr
