"""Task, run and harness files made to hurt `hemra run` (issue 31).

- A task's `${VAR}` templates read only what the user named with --verifier-env (a run file's
  [verifier] env), never HEMRA's own variables: a task asking for another is refused when the
  run is planned, in one line naming the task and the variable.
- Nesting deep enough to exhaust a parser's recursion, in task.toml, a run file, a harness file
  or a dataset.toml, is refused in one line naming the file; in what a verifier leaves, it is
  the agent's result (reward.json) or a note beside the reward that stands
  (reward-details.json), never an infrastructure failure.
Refusals exit 2 and change nothing stored."""

from pathlib import Path

import pytest

from tests.e2e.helpers import copy_task, hemra, show

pytestmark = pytest.mark.slow
SECRET = "hemra-canary-31c0ffee"
#: Writes reward 1 when the verifier was given SEEN=<SECRET>, else 0.
SEES_SECRET = f"""#!/bin/bash
mkdir -p /logs/verifier
if [ "${{SEEN:-}}" = "{SECRET}" ]; then echo 1; else echo 0; fi > /logs/verifier/reward.txt
"""


def _task(tmp: Path, verifier: str = "", solution: str = "", test_sh: str = "", toml: str = "") -> str:
    """text-stats with [verifier] and [solution] lines, and another test.sh, as dataset ./ds."""
    task = copy_task("text-stats", tmp / "ds")
    text = (task / "task.toml").read_text()
    text = text.replace("[verifier]\n", f"[verifier]\n{verifier}\n").replace("[solution]\nenv = {}\n", "")
    (task / "task.toml").write_text(text + (f"\n[solution]\n{solution}\n" if solution else "") + toml)
    if test_sh:
        (task / "tests" / "test.sh").write_text(test_sh)
    return str(tmp / "ds")


@pytest.fixture
def recorded_env(hemra_env, tmp_path):
    """hemra_env with the secrets a task may want set, and one run recorded."""
    env = dict(hemra_env, HEMRA_TOKEN=SECRET, HOST_SECRET=SECRET)
    recorded = hemra(env, "run", "-H", "nop", "-d", "hemra-offline", "-t", "hemra/text-stats", "--detach")
    assert recorded.returncode == 0, recorded.stderr
    return env


def _stored(env: dict) -> dict:
    """Every stored byte: the SQLite file (its WAL too) and the blobs under HEMRA_HOME."""
    home = Path(env["HEMRA_HOME"])
    return {str(p): p.read_bytes() for p in sorted(home.rglob("*")) if p.is_file()}


def _run_file(tmp: Path, text: str) -> str:
    (tmp / "run.toml").write_text('harnesses = ["nop"]\ndatasets = ["hemra-offline"]\n' + text)
    return str(tmp / "run.toml")


def _harness_file(tmp: Path, text: str) -> str:
    (tmp / "harnesses").mkdir()
    (tmp / "harnesses" / "deep.toml").write_text(text)
    return str(tmp / "harnesses" / "deep.toml")


def _dataset_toml(tmp: Path, text: str) -> str:
    folder = _task(tmp)
    (Path(folder) / "dataset.toml").write_text(text)
    return folder


DEEP = "[" * 100_000
REFUSED = {
    # Templates: the variable is set in `hemra run`'s environment each time; unnamed, it is not read.
    "a task reading HEMRA_TOKEN": (
        lambda tmp: ["run", "-H", "nop", "-d", _task(tmp, 'env = { SEEN = "${HEMRA_TOKEN}" }')],
        ["ds/text-stats/task.toml: [verifier] env SEEN reads ${HEMRA_TOKEN}", "HEMRA's own", "(task hemra/text-stats)"],
    ),
    "a task reading HEMRA_TOKEN that the run names": (
        lambda tmp: (
            ["run", "-H", "nop", "-d", _task(tmp, 'env = { SEEN = "${HEMRA_TOKEN}" }')]
            + ["--verifier-env", "HEMRA_TOKEN"]
        ),
        ["verifier env HEMRA_TOKEN (--verifier-env, run file: [verifier] env)", "never passed to a task"],
    ),
    "a task reading a variable the run does not name": (
        lambda tmp: ["run", "-H", "nop", "-d", _task(tmp, 'env = { SEEN = "${HOST_SECRET}" }')],
        ["[verifier] env SEEN reads ${HOST_SECRET}", "--verifier-env HOST_SECRET", "(task hemra/text-stats)"],
    ),
    "a task reading it with a default": (
        lambda tmp: (
            ["run", "-H", "nop", "-d", _task(tmp, 'env = { SEEN = "x${HOST_SECRET:-none}" }')]
            + ["--verifier-env", "OTHER"]
        ),
        ["[verifier] env SEEN reads ${HOST_SECRET}", "(task hemra/text-stats)"],
    ),
    "the oracle's solution reading a variable the run does not name": (
        lambda tmp: ["run", "-H", "oracle", "-d", _task(tmp, solution='env = { KEY = "${HOST_SECRET}" }')],
        ["[solution] env KEY reads ${HOST_SECRET}", "(task hemra/text-stats)"],
    ),
    "a run file naming HEMRA_DATABASE_URL": (
        lambda tmp: ["run", _run_file(tmp, '[verifier]\nenv = ["HEMRA_DATABASE_URL"]\n')],
        ["verifier env HEMRA_DATABASE_URL", "HEMRA's own variables (HEMRA_*) are never passed to a task"],
    ),
    # Nesting.
    "task.toml nested deep": (
        lambda tmp: ["run", "-H", "nop", "-d", _task(tmp, toml=f"\n[metadata2]\nx = {DEEP}\n")],
        ["ds/text-stats/task.toml: nested more than 64 levels deep"],
    ),
    "task.toml with a long dotted key": (
        lambda tmp: ["run", "-H", "nop", "-d", _task(tmp, toml="\n[metadata2]\n" + ".".join(["k"] * 3000) + " = 1\n")],
        ["ds/text-stats/task.toml: a key of more than 64 dotted parts"],
    ),
    "a run file nested deep": (
        lambda tmp: ["run", _run_file(tmp, f"tasks = {DEEP}\n")],
        ["run.toml: nested more than 64 levels deep"],
    ),
    "a harness file nested deep": (
        lambda tmp: ["run", "-H", _harness_file(tmp, f'kind = "program"\ncommand = {DEEP}\n'), "-d", "hemra-offline"],
        ["harnesses/deep.toml: nested more than 64 levels deep"],
    ),
    "a dataset.toml nested deep": (
        lambda tmp: ["run", "-H", "nop", "-d", _dataset_toml(tmp, f"name = {DEEP}\n")],
        ["ds/dataset.toml: nested more than 64 levels deep"],
    ),
}


@pytest.mark.parametrize("case", list(REFUSED))
def test_hostile_task_and_run_files__one_line_exit_2_store_unchanged(case, recorded_env, tmp_path):
    make_args, expected = REFUSED[case]
    args = make_args(tmp_path)
    before = _stored(recorded_env)
    result = hemra(recorded_env, *args, cwd=tmp_path, timeout=120)
    assert result.returncode == 2, result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    for fragment in expected:
        assert fragment in lines[0], lines[0]
    assert SECRET not in result.stderr
    assert _stored(recorded_env) == before


def test_a_variable_the_run_names_is_what_the_task_reads(hemra_env, tmp_path):
    """Named with --verifier-env, HOST_SECRET reaches the verifier through the task's template;
    HEMRA's own variables still read as unset, and nothing unnamed is read."""
    env = dict(hemra_env, HOST_SECRET=SECRET)
    dataset = _task(tmp_path, 'env = { SEEN = "${HOST_SECRET}" }', test_sh=SEES_SECRET)
    result = hemra(env, "run", "-H", "nop", "-d", dataset, "--verifier-env", "HOST_SECRET", "--label", "named")
    assert result.returncode == 0, result.stderr
    [attempt] = show(env, "named")["attempts"]
    assert attempt["score"]["rewards"] == {"reward": 1.0}


def test_what_a_verifier_leaves_nested_deep_is_a_result_never_an_infrastructure_failure(hemra_env, tmp_path):
    """reward-details.json nested deep: the reward stands, the details say why they are not
    kept. reward.json nested deep: no usable reward, the agent's result (reward_invalid)."""
    details = "#!/bin/bash\nmkdir -p /logs/verifier\necho 1 > /logs/verifier/reward.txt\n"
    details += "python3 -c \"print('[' * 100000 + ']' * 100000)\" > /logs/verifier/reward-details.json\n"
    rewards = "#!/bin/bash\nmkdir -p /logs/verifier\n"
    rewards += "python3 -c \"print('{\\\"a\\\": ' + '[' * 100000 + ']' * 100000 + '}')\" > /logs/verifier/reward.json\n"
    _task(tmp_path / "details", test_sh=details)
    _task(tmp_path / "rewards", test_sh=rewards)
    for name in ("details", "rewards"):
        result = hemra(hemra_env, "run", "-H", "nop", "-d", str(tmp_path / name / "ds"), "--label", name)
        assert result.returncode == 0, result.stderr
    [kept] = show(hemra_env, "details")["attempts"]
    assert kept["outcome"] == "OUTCOME_COMPLETED" and kept["score"]["state"] == "SCORE_STATE_SCORED"
    assert kept["score"]["rewards"] == {"reward": 1.0}
    [judgment] = kept["score"]["judgments"]
    assert judgment["error"] == "reward-details.json: nested more than 64 levels deep"
    [refused] = show(hemra_env, "rewards")["attempts"]
    assert refused["outcome"] == "OUTCOME_COMPLETED" and refused["score"]["rewards"] == {"reward": 0.0}
    assert refused["score"]["fault"] == "reward_invalid"
    assert refused["score"]["error"] == "reward.json: nested more than 64 levels deep"
