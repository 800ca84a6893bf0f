"""HEMRA judges end to end through the real `hemra` command, against the scripted model server
on loopback: a judged run (judge file beside the run file), judging after the fact with
`hemra judge` (a run, and an import of a real Harbor job), `compare --judge` and `--criteria`
with their pairing rules, and bad judge input refused in one line with nothing recorded."""

import json
from pathlib import Path

import pytest

from hemra.services.store.service import Store
from tests.conftest import REPO
from tests.e2e.helpers import hemra, runs, show
from tests.importer.test_imports import unpack
from tests.modelserver import ModelServer, parse

SCRIPTED = REPO / "examples" / "harnesses" / "harnesses" / "scripted-python.toml"
JUDGE = """
description = "Did the agent reverse the lines, and say so?"

[model]
api = "{api}"
id = "{model}"
base_url_env = "JUDGE_URL"
api_key_env = "JUDGE_KEY"

[input]
files = ["/app/reversed.txt"]
diff = true
trajectory = "messages"

[[criterion]]
id = "says_done"
description = "The final message says the work is done"
expected = "done: 3 steps"
weight = 1.0

[[criterion]]
id = "last_step_first"
description = "The file starts with the last step"
expected = "5. Bake for 25 minutes."
weight = 3.0
"""


@pytest.fixture
def model_server():
    with ModelServer(parse({"judge": [{"judge": "rubric"}]})) as server:
        yield server


def judged_env(hemra_env: dict, server: ModelServer, api: str = "openai-chat") -> dict:
    url = server.url if api == "anthropic-messages" else server.url + "/v1"
    return {**hemra_env, "JUDGE_URL": url, "JUDGE_KEY": "scripted-key"}


def write_judge(folder: Path, name: str = "quality", model: str = "judge-model-1", api: str = "openai-chat") -> Path:
    path = folder / "judges" / f"{name}.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(JUDGE.format(api=api, model=model))
    return path


def run_file(folder: Path, label: str, harnesses: list[str], judges: list[str] = ("quality",)) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    text = f'name = "{label}"\nharnesses = {json.dumps(harnesses)}\ndatasets = ["hemra-offline"]\n'
    text += 'tasks = ["hemra/reverse-lines"]\n'
    text += "".join(f'\n[[judge]]\nname = "{j}"\n' for j in judges)
    path = folder / "hemra.toml"
    path.write_text(text)
    return path


def judge_scores(env: dict, label: str) -> dict[str, dict]:
    return {a["harness_name"]: a.get("judge_scores", []) for a in show(env, label)["attempts"]}


def test_a_judged_run_end_to_end(hemra_env, tmp_path, model_server):
    env = judged_env(hemra_env, model_server)
    write_judge(tmp_path / "eval")
    path = run_file(tmp_path / "eval", "judged", [str(SCRIPTED), "nop"])
    result = hemra(env, "run", str(path))
    assert result.returncode == 0, result.stderr + result.stdout
    # The report: the judge's mean per cell, beside the task's own verdicts.
    assert "quality (hemra)" in result.stdout and "judge-model-1" in result.stdout, result.stdout
    scores = judge_scores(env, "judged")
    [scripted], [nop] = scores["scripted-python"], scores["nop"]
    assert scripted["state"] == "SCORE_STATE_SCORED" and scripted["rewards"] == {"quality": 1.0}
    assert nop["state"] == "SCORE_STATE_SCORED" and nop["rewards"] == {"quality": 0.0}
    assert scripted["judge_model"] == "judge-model-1" and scripted["scorer_fingerprint"].startswith("sha256:")
    by_id = {j["criterion"]: j for j in scripted["judgments"]}
    assert by_id["last_step_first"]["passed"] and by_id["last_step_first"]["expected"] == "5. Bake for 25 minutes."
    [call] = scripted["judge_calls"]
    assert call["outcome"] == "ok" and call["request_blob_digest"] and call["response_blob_digest"]
    # What the judge read came from the recorded attempt: its final message, the file the
    # executor captured when the agent stopped, and its diff against the start, all fenced.
    prompts = [r.body["messages"][1]["content"] for r in model_server.model_requests()]
    read = next(p for p in prompts if "5. Bake for 25 minutes." in p)
    assert "done: 3 steps" in read and "+5. Bake for 25 minutes." in read and "<untrusted-" in read
    assert "[not captured, or not found]" in next(p for p in prompts if p != read)  # nop wrote nothing
    # An export carries the judge scores and every call's bodies; restored elsewhere, they are the same.
    assert hemra(env, "export", "judged", "--out", str(tmp_path / "out")).returncode == 0
    elsewhere = {**env, "HEMRA_HOME": str(tmp_path / "elsewhere")}
    restored = hemra(elsewhere, "import", str(tmp_path / "out"))
    assert restored.returncode == 0, restored.stderr
    assert judge_scores(elsewhere, "judged") == scores
    for digest in (call["request_blob_digest"], call["response_blob_digest"]):
        hex_ = digest.split(":")[1]
        assert (tmp_path / "out" / "blobs" / hex_[:2] / hex_[2:]).is_file()


async def test_the_criterion_table_gains_judge_and_criterion_rows(hemra_env, tmp_path, model_server):
    env = judged_env(hemra_env, model_server)
    write_judge(tmp_path / "eval")
    assert hemra(env, "run", str(run_file(tmp_path / "eval", "judged", [str(SCRIPTED), "nop"]))).returncode == 0
    home = Path(hemra_env["HEMRA_HOME"])
    store = await Store.open(f"sqlite:///{home / 'hemra.db'}", home / "blobs")
    try:
        table = await store.criterion_table("hemra-offline")
    finally:
        await store.close()
    harnesses = [s.harness_name for s in table.sources]
    rows = {r.criterion: dict(zip(harnesses, (c.value for c in r.cells))) for r in table.rows if r.unit == "value"}
    assert rows == {
        "judge quality": {"scripted-python": 1.0, "nop": 0.0},
        "quality / last_step_first": {"scripted-python": 1.0, "nop": 0.0},
        "quality / says_done": {"scripted-python": 1.0, "nop": 0.0},
    }


def test_judging_an_import_of_a_real_harbor_job_after_the_fact(hemra_env, tmp_path, model_server):
    env = judged_env(hemra_env, model_server)
    job = unpack("harbor-0.25-oracle.tar", tmp_path)
    assert hemra(env, "import", str(job), "--label", "harbor").returncode == 0
    write_judge(tmp_path)
    first = hemra(env, "judge", "harbor", "--judge", "quality", "--json", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    [summary] = json.loads(first.stdout)
    attempts = show(env, "harbor")["attempts"]
    assert summary["judged"] == len(attempts) > 0 and summary["skipped"] == 0
    assert all(len(a["judge_scores"]) == 1 for a in attempts)
    # Judged already, by the same definition: nothing to do; a changed rubric judges again.
    again = json.loads(
        hemra(env, "judge", "harbor", "--judge", "quality", "--only-missing", "--json", cwd=tmp_path).stdout
    )
    assert again[0]["judged"] == 0 and again[0]["skipped"] == len(attempts)
    write_judge(tmp_path, model="judge-model-2")
    changed = json.loads(
        hemra(env, "judge", "harbor", "--judge", "quality", "--only-missing", "--json", cwd=tmp_path).stdout
    )
    assert changed[0]["judged"] == len(attempts)
    newest = show(env, attempts[0]["id"])["attempt"]["judge_scores"]
    assert [s["judge_model"] for s in newest] == ["judge-model-2", "judge-model-1"]  # newest first, both kept


def test_compare_by_judge_pairs_only_one_definition(hemra_env, tmp_path, model_server):
    env = judged_env(hemra_env, model_server)
    for label, model in (("one", "judge-model-1"), ("two", "judge-model-1"), ("other", "judge-model-2")):
        write_judge(tmp_path / label, model=model)
        result = hemra(env, "run", str(run_file(tmp_path / label, label, [str(SCRIPTED)])))
        assert result.returncode == 0, result.stderr
    same = json.loads(hemra(env, "compare", "one", "two", "--judge", "quality", "--json").stdout)
    assert same["paired_tasks"] == 1 and not same.get("not_comparable")
    criteria = {c["criterion"]: c for c in same["criteria"]}
    assert set(criteria) == {"says_done", "last_step_first"}
    assert criteria["says_done"]["a_mean"] == criteria["says_done"]["b_mean"] == 1.0
    text = hemra(env, "compare", "one", "two", "--criteria")
    assert text.returncode == 0 and "quality / last_step_first" in text.stdout, text.stdout
    # Another judge model is another measurement: listed as not comparable, never paired.
    other = json.loads(hemra(env, "compare", "one", "other", "--judge", "quality", "--json").stdout)
    assert other.get("paired_tasks", 0) == 0 and other["not_comparable"], other
    assert "judge-model-1" in json.dumps(other["not_comparable"]) and "judge-model-2" in json.dumps(other)


@pytest.mark.parametrize(
    ("judge_text", "message"),
    [
        (None, "no judge file"),
        ('[model]\napi = "openai-chat"\nid = "m"\nanswers = 1\n', "unknown key 'answers'"),
        ('[model]\napi = "openai-chat"\nid = "m"\n\n[[criterion]]\ndescription = "x"\n', "has no id"),
        (
            '[model]\napi = "openai-chat"\nid = "m"\n[prompt]\ntemplate = "{answer} {secret}"\n'
            '[[criterion]]\nid = "a"\ndescription = "x"\n',
            "unknown placeholder {secret}",
        ),
    ],
)
def test_bad_judge_input_is_one_line_and_records_nothing(hemra_env, tmp_path, judge_text, message):
    path = run_file(tmp_path / "eval", "bad", ["oracle"])
    if judge_text is not None:
        (tmp_path / "eval" / "judges").mkdir()
        (tmp_path / "eval" / "judges" / "quality.toml").write_text(judge_text)
    result = hemra(hemra_env, "run", str(path))
    assert result.returncode == 2, result.stdout
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("error:") and message in line and "quality" in line, line
    assert runs(hemra_env) == []


@pytest.mark.parametrize(("unset", "what"), [("JUDGE_URL", "its endpoint"), ("JUDGE_KEY", "its key")])
def test_a_judge_without_its_endpoint_or_key_is_refused_at_plan_time(hemra_env, tmp_path, unset, what):
    env = {**hemra_env, "JUDGE_URL": "http://127.0.0.1:9/v1", "JUDGE_KEY": "k"}
    del env[unset]
    write_judge(tmp_path / "eval")
    result = hemra(env, "run", str(run_file(tmp_path / "eval", "unjudgeable", ["oracle"])))
    assert result.returncode == 2, result.stdout
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("error:") and "'quality'" in line and unset in line and what in line, line
    assert runs(env) == []
    # Judging after the fact checks the same, before it judges anything.
    judged = hemra(env, "judge", "some-run", "--judge", "quality", cwd=tmp_path / "eval")
    assert judged.returncode == 2 and unset in judged.stderr, judged.stderr


def test_only_missing__matches_the_judge_by_name_and_fingerprint(hemra_env, tmp_path, model_server):
    env = judged_env(hemra_env, model_server)
    job = unpack("harbor-0.25-oracle.tar", tmp_path)
    assert hemra(env, "import", str(job), "--label", "harbor").returncode == 0
    write_judge(tmp_path, name="quality")
    write_judge(tmp_path, name="twin")  # the same definition: the same fingerprint, another judge
    assert hemra(env, "judge", "harbor", "--judge", "quality", cwd=tmp_path).returncode == 0
    attempts = show(env, "harbor")["attempts"]
    twin = hemra(env, "judge", "harbor", "--judge", "twin", "--only-missing", "--json", cwd=tmp_path)
    assert twin.returncode == 0, twin.stderr
    [summary] = json.loads(twin.stdout)
    assert summary["judged"] == len(attempts) and summary["skipped"] == 0, summary
    fingerprints = {s["judge"]: s["scorer_fingerprint"] for s in show(env, "harbor")["attempts"][0]["judge_scores"]}
    assert fingerprints["twin"] == fingerprints["quality"]
    again = hemra(env, "judge", "harbor", "--judge", "twin", "--only-missing", "--json", cwd=tmp_path)
    assert json.loads(again.stdout)[0]["skipped"] == len(attempts)
