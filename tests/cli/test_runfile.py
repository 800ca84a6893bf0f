"""hemra.clients.cli.runfile: run files (TOML) and the flags merged over them."""

import json
from pathlib import Path

import pytest

from hemra.clients.cli.runfile import Flags, RunFileError, merge, read

FULL = """
name = "nightly"
baseline = "nop"
harnesses = ["oracle", "nop"]
datasets = ["bench", "other@abc123"]
attempts = 3
concurrency = 4
model = "model-x"
timeout_secs = 600
max_infra_retries = 2
tasks = ["fix-*"]
exclude = ["*slow*"]
require = ["filesystem_isolation"]
pool = "gpu-a100"
allow_history = ["swebench/*"]

[sandbox]
kind = "docker"
image = "ubuntu:24.04"
network = "host"

[verifier]
network = "none"
env = ["API_URL", "TOKEN"]

[[judge]]
name = "style"

[[judge]]
name = "safety"
"""


def write(tmp_path: Path, text: str, name: str = "hemra.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    for judge in ("style", "safety", "new"):  # the judges the run files here name
        write_judge(tmp_path, judge)
    return path


def write_judge(folder: Path, name: str, model: str = "judge-1") -> Path:
    path = folder / "judges" / f"{name}.toml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(
        f'[model]\napi = "openai-chat"\nid = "{model}"\n\n[[criterion]]\nid = "ok"\ndescription = "It is ok"\n'
    )
    return path


# --- read ---------------------------------------------------------------------------


def test_read__every_documented_key(tmp_path):
    data = read(write(tmp_path, FULL))
    assert set(data) == {
        "name",
        "baseline",
        "harnesses",
        "datasets",
        "attempts",
        "concurrency",
        "model",
        "timeout_secs",
        "max_infra_retries",
        "tasks",
        "exclude",
        "require",
        "sandbox",
        "verifier",
        "judge",
        "pool",
        "allow_history",
    }
    assert data["sandbox"] == {"kind": "docker", "image": "ubuntu:24.04", "network": "host"}
    assert data["judge"] == [{"name": "style"}, {"name": "safety"}]


def test_merge__every_documented_key_reaches_spec(tmp_path):
    path = write(tmp_path, FULL)
    spec = merge(path, Flags())
    assert spec.label == "nightly"
    assert spec.baseline == "nop"
    assert list(spec.harnesses) == ["oracle", "nop"]
    assert list(spec.datasets) == ["bench", "other@abc123"]
    assert spec.attempts == 3
    assert spec.concurrency == 4
    assert spec.model == "model-x"
    assert spec.timeout_secs == 600
    assert spec.max_infra_retries == 2
    assert list(spec.tasks) == ["fix-*"]
    assert list(spec.exclude) == ["*slow*"]
    assert list(spec.require) == ["filesystem_isolation"]
    assert spec.sandbox == "docker" and spec.sandbox_network == "host"
    assert spec.verifier_network == "none"
    assert list(spec.verifier_env) == ["API_URL", "TOKEN"]
    assert list(spec.judges) == ["style", "safety"]
    assert spec.pool == "gpu-a100"
    assert spec.run_file == str(path.resolve())
    assert list(spec.allow_history) == ["swebench/*"]
    # --allow-history adds to the file's patterns.
    assert list(merge(path, Flags(allow_history=["hemra/*"])).allow_history) == ["swebench/*", "hemra/*"]


def test_read__unknown_top_level_key(tmp_path):
    path = write(tmp_path, 'harnesses = ["oracle"]\nharness = ["nop"]\n')
    with pytest.raises(RunFileError) as info:
        read(path)
    assert str(path) in str(info.value)
    assert "'harness'" in str(info.value)


def test_read__unknown_sandbox_key(tmp_path):
    path = write(tmp_path, '[sandbox]\nkind = "host"\nmemory = "4g"\n')
    with pytest.raises(RunFileError) as info:
        read(path)
    assert str(path) in str(info.value)
    assert "sandbox.'memory'" in str(info.value)


def test_read__unknown_verifier_key(tmp_path):
    path = write(tmp_path, "[verifier]\ntimeout = 5\n")
    with pytest.raises(RunFileError, match="verifier.'timeout'"):
        read(path)


@pytest.mark.parametrize(
    "text,message",
    [
        ('attempts = "3"', "attempts must be an integer"),
        ("attempts = 2.0", "attempts must be an integer"),
        ("attempts = true", "attempts must be an integer"),
        ("name = 5", "name must be a string"),
        ('harnesses = "oracle"', "harnesses must be a list"),
        ('sandbox = "host"', "sandbox must be a table"),
        ("[sandbox]\nkind = 1", "sandbox.kind must be a string"),
        ('[verifier]\nenv = "A"', "verifier.env must be a list"),
    ],
)
def test_read__wrong_type(tmp_path, text, message):
    path = write(tmp_path, text + "\n")
    with pytest.raises(RunFileError, match=message) as info:
        read(path)
    assert str(path) in str(info.value)


def test_read__list_of_non_strings(tmp_path):
    with pytest.raises(RunFileError, match="datasets must be a list of strings"):
        read(write(tmp_path, "datasets = [1, 2]\n"))


def test_read__judge_without_name(tmp_path):
    with pytest.raises(RunFileError, match=r"every \[\[judge\]\] needs a name"):
        read(write(tmp_path, '[[judge]]\nmodel = "x"\n'))


def test_read__malformed_toml_names_line(tmp_path):
    path = write(tmp_path, 'name = "x"\nattempts = 3\nharnesses = [\n"oracle",,\n]\n')
    with pytest.raises(RunFileError) as info:
        read(path)
    message = str(info.value)
    assert str(path) in message
    assert "malformed TOML" in message
    assert "line 4" in message


def test_read__missing_file(tmp_path):
    with pytest.raises(RunFileError, match="no such run file"):
        read(tmp_path / "absent.toml")


def test_read__not_utf8(tmp_path):
    path = tmp_path / "hemra.toml"
    path.write_bytes(b'name = "\xff"\n')
    with pytest.raises(RunFileError, match="not UTF-8"):
        read(path)


# --- merge: flags ---------------------------------------------------------------------


def test_merge__flags_replace_file_values(tmp_path):
    flags = Flags(
        harnesses=["prog"],
        datasets=["./local"],
        attempts=7,
        tasks=["only"],
        exclude=["skip"],
        baseline="prog",
        concurrency=9,
        sandbox="docker",
        label="mine",
        model="m2",
        timeout_secs=5,
        max_infra_retries=0,
    )
    spec = merge(write(tmp_path, FULL), flags)
    assert list(spec.harnesses) == ["prog"]
    assert list(spec.datasets) == ["./local"]
    assert spec.attempts == 7
    assert list(spec.tasks) == ["only"]
    assert list(spec.exclude) == ["skip"]
    assert spec.baseline == "prog"
    assert spec.concurrency == 9
    assert spec.sandbox == "docker"
    assert spec.label == "mine"
    assert spec.model == "m2"
    assert spec.timeout_secs == 5
    assert spec.max_infra_retries == 0  # an explicit 0 flag still replaces the file's 2


def test_merge__empty_string_flags_replace(tmp_path):
    spec = merge(write(tmp_path, FULL), Flags(baseline="", model=""))
    assert spec.baseline == ""
    assert spec.model == ""


def test_merge__flags_add_to_lists_without_duplicates(tmp_path):
    flags = Flags(
        require=["filesystem_isolation", "process_isolation", "process_isolation"],
        verifier_env=["TOKEN", "EXTRA"],
        judges=["safety", "new"],
    )
    spec = merge(write(tmp_path, FULL), flags)
    assert list(spec.require) == ["filesystem_isolation", "process_isolation"]
    assert list(spec.verifier_env) == ["API_URL", "TOKEN", "EXTRA"]
    assert list(spec.judges) == ["style", "safety", "new"]
    # Each judge's file travels in the spec, read beside the run file.
    assert [j.name for j in spec.judge_specs] == ["style", "safety", "new"]
    assert json.loads(spec.judge_specs[0].definition_json)["model"] == "judge-1"


def test_merge__a_judge_without_a_file_is_one_line(tmp_path):
    path = write(tmp_path, 'harnesses = ["oracle"]\ndatasets = ["d"]\n\n[[judge]]\nname = "absent"\n')
    with pytest.raises(
        RunFileError, match=r"^judge 'absent': no judge file .*judges/absent.toml \(built-in judges: reward-hacking\)$"
    ):
        merge(path, Flags())


def test_merge__a_judge_file_path_names_the_judge_by_its_stem(tmp_path):
    (tmp_path / "elsewhere").mkdir()
    other = write_judge(tmp_path / "elsewhere", "rubric", model="judge-2")
    spec = merge(write(tmp_path, 'harnesses = ["oracle"]\ndatasets = ["d"]\n'), Flags(judges=[str(other)]))
    assert list(spec.judges) == ["rubric"] and spec.judge_specs[0].fingerprint.startswith("sha256:")


def test_merge__verifier_env_must_be_names(tmp_path):
    with pytest.raises(RunFileError, match="flags: verifier env lists variable names only"):
        merge(None, Flags(verifier_env=["A=secret"]))
    path = write(tmp_path, '[verifier]\nenv = ["OK", "NOT-A-NAME"]\n')
    with pytest.raises(RunFileError, match="verifier env lists variable names only") as info:
        merge(path, Flags())
    assert str(path) in str(info.value)


def test_merge__verifier_env_non_string_is_run_file_error(tmp_path):
    path = write(tmp_path, '[verifier]\nenv = ["OK", 3]\n')
    with pytest.raises(RunFileError) as info:
        merge(path, Flags())
    assert str(path) in str(info.value)


def test_merge__defaults_without_run_file():
    spec = merge(None, Flags(harnesses=["oracle"], datasets=["bench"]))
    assert spec.label == ""  # the planner names it (runspec.default_label)
    assert spec.attempts == 1
    assert spec.concurrency == 1
    assert spec.sandbox == "host"
    assert spec.pool == "default"
    assert spec.baseline == ""
    assert spec.model == ""
    assert spec.timeout_secs == 0
    assert spec.max_infra_retries == 0
    assert list(spec.require) == [] and list(spec.judges) == [] and list(spec.verifier_env) == []
    assert spec.run_file == ""
    assert list(spec.harnesses) == ["oracle"]


def test_merge__defaults_with_minimal_run_file(tmp_path):
    spec = merge(write(tmp_path, 'harnesses = ["oracle"]\ndatasets = ["bench"]\n'), Flags())
    assert (spec.label, spec.attempts, spec.concurrency, spec.sandbox) == ("", 1, 1, "host")
    assert spec.verifier_network == ""


def test_merge__verifier_network_none_or_bridge(tmp_path):
    spec = merge(write(tmp_path, 'harnesses = ["oracle"]\n[verifier]\nnetwork = "bridge"\n'), Flags())
    assert spec.verifier_network == "bridge"
    with pytest.raises(RunFileError, match="verifier.network must be one of none, bridge"):
        merge(write(tmp_path, 'harnesses = ["oracle"]\n[verifier]\nnetwork = "host"\n'), Flags())


def test_merge__bad_file_raises(tmp_path):
    with pytest.raises(RunFileError, match="unknown key 'oops'"):
        merge(write(tmp_path, "oops = 1\n"), Flags(harnesses=["oracle"]))


def test_merge__harness_flags_drop_a_file_baseline_they_left_out(tmp_path):
    spec = merge(write(tmp_path, FULL), Flags(harnesses=["oracle"]))
    assert list(spec.harnesses) == ["oracle"] and spec.baseline == ""  # the planner takes the first
    kept = merge(write(tmp_path, FULL), Flags(harnesses=["oracle", "nop"]))
    assert kept.baseline == "nop"


@pytest.mark.parametrize(
    "text, flags, message",
    [
        ("attempts = 0\n", Flags(), "hemra.toml: attempts must be at least 1 (got 0)"),
        ("concurrency = 0\n", Flags(), "hemra.toml: concurrency must be at least 1 (got 0)"),
        ("", Flags(attempts=0), "--attempts must be at least 1 (got 0)"),
        ("", Flags(concurrency=-2), "--concurrency must be at least 1 (got -2)"),
    ],
)
def test_merge__zero_attempts_or_concurrency_refused(tmp_path, text, flags, message):
    with pytest.raises(RunFileError, match="must be at least 1") as raised:
        merge(write(tmp_path, text), flags)
    assert str(raised.value).endswith(message)


@pytest.mark.parametrize(
    "text, flags, message",
    [
        ("", Flags(attempts=99999999999999999999), "--attempts must be at most 1,000 (got 99,999,999,999,999,999,999)"),
        ("", Flags(concurrency=2**63), "--concurrency must be at most 1,000 (got 9,223,372,036,854,775,808)"),
        ("", Flags(timeout_secs=10**30), "--timeout must be at most 604,800 (got 1,000,000,000,000,000,000,0...)"),
        ("", Flags(timeout_secs=-1), "--timeout must be at least 0 (got -1)"),
        ("", Flags(max_infra_retries=101), "--max-infra-retries must be at most 100 (got 101)"),
        (
            "timeout_secs = 9999999999\n",
            Flags(),
            "hemra.toml: timeout_secs must be at most 604,800 (got 9,999,999,999)",
        ),
        ("max_infra_retries = -1\n", Flags(), "hemra.toml: max_infra_retries must be at least 0 (got -1)"),
        ("attempts = 9223372036854775807\n", Flags(), "hemra.toml: attempts must be at most 1,000"),
    ],
)
def test_merge__numbers_past_their_maximum_refused_before_protobuf(tmp_path, text, flags, message):
    with pytest.raises(RunFileError) as raised:
        merge(write(tmp_path, text), flags)
    assert message in str(raised.value)


def test_merge__numbers_at_their_maximum_accepted(tmp_path):
    spec = merge(
        write(tmp_path, ""), Flags(attempts=1000, concurrency=1000, timeout_secs=604800, max_infra_retries=100)
    )
    assert (spec.attempts, spec.concurrency, spec.timeout_secs, spec.max_infra_retries) == (1000, 1000, 604800, 100)


@pytest.mark.parametrize("name", ["GPU", "-gpu", "gpu-", "gpu_a", "a" * 64, "pool one"])
def test_merge__pool_must_be_a_dns_label(tmp_path, name):
    with pytest.raises(RunFileError, match="^--pool: pool .* is not a pool name"):
        merge(None, Flags(harnesses=["oracle"], pool=name))
    path = write(tmp_path, f'pool = "{name}"\n')
    with pytest.raises(RunFileError, match=f"^{path}: pool: pool"):
        merge(path, Flags())


def test_merge__an_image_without_a_sandbox_means_docker(tmp_path):
    spec = merge(write(tmp_path, 'harnesses = ["oracle"]\n[sandbox]\nimage = "alpine:3.20"\n'), Flags())
    assert (spec.sandbox, spec.sandbox_image) == ("docker", "alpine:3.20")
    # A sandbox named, in the file or by flag, is the run's (the planner refuses host with an image).
    named = merge(write(tmp_path, 'harnesses = ["oracle"]\n[sandbox]\nkind = "host"\nimage = "a:1"\n'), Flags())
    assert named.sandbox == "host"
    assert merge(write(tmp_path, '[sandbox]\nimage = "a:1"\n'), Flags(sandbox="modal")).sandbox == "modal"
