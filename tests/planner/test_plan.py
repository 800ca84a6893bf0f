"""hemra.services.planner.plan.resolve: a run spec (defaults filled) against a small dataset on disk."""

from pathlib import Path

import pytest

from hemra.services.common import judges, runspec
from hemra.services.domain.planerrors import NotFound, PlanError
from hemra.services.planner import plan
from hemra.v1 import common_pb2 as pb


def make_task(folder: Path, dockerfile: str = "FROM ubuntu:24.04\nWORKDIR /app\n") -> Path:
    folder.mkdir(parents=True)
    (folder / "task.toml").write_text('version = "1.0"\n')
    (folder / "instruction.md").write_text("do it\n")
    (folder / "environment").mkdir()
    (folder / "environment" / "Dockerfile").write_text(dockerfile)
    (folder / "tests").mkdir()
    (folder / "tests" / "test.sh").write_text("#!/bin/sh\necho 1 > /logs/verifier/reward.txt\n")
    return folder


@pytest.fixture
def project(tmp_path, monkeypatch):
    """tmp_path/ds with tasks a and b; tmp_path/harnesses/prog.toml; cwd is tmp_path."""
    monkeypatch.delenv("HEMRA_DATASETS_PATH", raising=False)
    make_task(tmp_path / "ds" / "a")
    make_task(tmp_path / "ds" / "b")
    (tmp_path / "harnesses").mkdir()
    (tmp_path / "harnesses" / "prog.toml").write_text(
        'kind = "program"\ncommand = "python3 agent.py"\nmodel = "model-a"\n'
    )
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _spec(**fields) -> pb.RunSpec:
    return runspec.with_defaults(pb.RunSpec(**fields))


def _resolve(project: Path, **kwargs) -> plan.Resolved:
    kwargs.setdefault("harnesses", ["oracle", "nop"])
    kwargs.setdefault("datasets", [str(project / "ds")])
    return plan.resolve(_spec(**kwargs), home=project / "home", cwd=project)


def test_resolve__trials_are_tasks_times_harnesses_times_attempts(project):
    resolved = _resolve(project, attempts=3)
    assert [h.harness_name for h in resolved.harnesses] == ["oracle", "nop"]
    assert resolved.cells == [(0, 0), (0, 1)]
    assert len(resolved.trials) == 2 * 2 * 3


def test_resolve__trials_in_task_major_order(project):
    resolved = _resolve(project, attempts=2)
    order = [(t.task_name, rep, cell) for cell, t, rep in resolved.trials]
    assert order == [
        ("a", 1, 0),
        ("a", 1, 1),
        ("a", 2, 0),
        ("a", 2, 1),
        ("b", 1, 0),
        ("b", 1, 1),
        ("b", 2, 0),
        ("b", 2, 1),
    ]


def test_resolve__selection_applies_to_trials(project):
    resolved = _resolve(project, tasks=["b"])
    assert {t.task_name for _, t, _ in resolved.trials} == {"b"}
    assert [t.task_name for t in resolved.datasets[0][1]] == ["b"]


def test_resolve__no_task_selected_raises(project):
    with pytest.raises(PlanError, match="no task matches"):
        _resolve(project, exclude=["*"])


def test_resolve__duplicate_refs_counted_once(project):
    resolved = _resolve(project, harnesses=["oracle", "oracle", "nop"])
    assert [h.harness_name for h in resolved.harnesses] == ["oracle", "nop"]
    assert len(resolved.trials) == 4


def test_resolve__baseline_defaults_to_first_harness(project):
    assert _resolve(project, harnesses=["nop", "oracle"]).baseline == "nop"


def test_resolve__explicit_baseline(project):
    assert _resolve(project, baseline="nop").baseline == "nop"


def test_resolve__unknown_baseline_raises(project):
    with pytest.raises(PlanError, match="baseline 'ghost' is not one of the run's harnesses"):
        _resolve(project, baseline="ghost")


def test_resolve__harness_file_next_to_cwd(project):
    resolved = _resolve(project, harnesses=["prog", "oracle"])
    assert resolved.harnesses[0].kind == "program"
    assert resolved.harnesses[0].command == ["python3", "agent.py"]


def test_resolve__harness_file_next_to_run_file(project, tmp_path_factory):
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    spec = _spec(harnesses=["prog"], datasets=["./ds"], run_file=str(project / "hemra.toml"))
    resolved = plan.resolve(spec, home=project / "home", cwd=elsewhere)
    assert resolved.harnesses[0].harness_name == "prog"
    assert resolved.datasets[0][0].source == (project / "ds").resolve()


def test_resolve__matching_model_accepted(project):
    resolved = _resolve(project, harnesses=["prog"], model="model-a")
    assert resolved.harnesses[0].model == "model-a"


def test_resolve__model_conflict_raises(project):
    with pytest.raises(PlanError) as info:
        _resolve(project, harnesses=["prog"], model="model-b")
    assert "model-a" in str(info.value) and "model-b" in str(info.value)
    assert "prog" in str(info.value)


def test_resolve__gpu_on_host_raises(project):
    with pytest.raises(PlanError, match="sandbox host cannot enforce gpu"):
        _resolve(project, require=["gpu"])


def test_resolve__host_requirements_accepted(project):
    assert _resolve(project, require=["filesystem_isolation", "process_isolation", "network_block"]).trials


def test_resolve__unknown_requirement_raises(project):
    with pytest.raises(PlanError, match="unknown requirement 'teleport'"):
        _resolve(project, require=["teleport"])


def test_resolve__unknown_sandbox_raises(project):
    with pytest.raises(PlanError, match=r"sandbox 'fly' is not available \(available: host, docker, modal\)"):
        _resolve(project, sandbox="fly")


def test_resolve__container_sandbox_takes_run_steps_and_network_block(project):
    make_task(project / "ds" / "c", dockerfile="FROM ubuntu\nRUN make\n")
    resolved = _resolve(project, sandbox="docker", require=["network_block"])
    assert "c" in {t.task_name for _, t, _ in resolved.trials}
    with pytest.raises(PlanError, match="sandbox docker cannot enforce gpu"):
        _resolve(project, sandbox="docker", require=["gpu"])


def test_resolve__sandbox_network_checked_against_the_sandbox_and_require(project):
    assert _resolve(project, sandbox="docker", sandbox_network="host").trials
    assert _resolve(project, sandbox="docker", sandbox_network="none", require=["network_block"]).trials
    with pytest.raises(
        PlanError, match="sandbox.network = 'host' opens the network, but the run requires network_block"
    ):
        _resolve(project, sandbox="docker", sandbox_network="host", require=["network_block"])
    with pytest.raises(PlanError, match="sandbox.network = 'none': the host sandbox always shares"):
        _resolve(project, sandbox="host", sandbox_network="none")


def test_resolve__verifier_network_bridge_only_on_docker_with_a_fresh_verifier(project):
    assert _resolve(project, verifier_network="none").trials
    assert _resolve(project, sandbox="docker", verifier_network="bridge").trials
    for sandbox in ("host", "modal"):
        with pytest.raises(
            PlanError,
            match=f"verifier.network = 'bridge': the {sandbox} sandbox cannot give a verifier a network of its own",
        ):
            _resolve(project, sandbox=sandbox, verifier_network="bridge")
    with pytest.raises(PlanError, match="verifier.network = 'open': must be one of none, bridge"):
        _resolve(project, sandbox="docker", verifier_network="open")
    with pytest.raises(
        PlanError,
        match='the run\'s verifier.network is "bridge", but task a cannot have it: the verifier must run in a fresh',
    ):
        _resolve(project, sandbox="docker", verifier_network="bridge", verifier_isolation="shared")


def test_resolve__a_tasks_verifier_network_is_checked_with_the_task(project):
    toml = project / "ds" / "a" / "task.toml"
    toml.write_text('version = "1.0"\n[verifier]\nnetwork = "bridge"\n')
    assert _resolve(project, sandbox="docker").trials
    assert _resolve(project, verifier_network="none").trials  # the run's choice wins
    with pytest.raises(
        PlanError, match=f'{toml}: \\[verifier\\] network is "bridge", but task a cannot have it: the host sandbox'
    ):
        _resolve(project)
    toml.write_text('version = "1.0"\n[verifier]\nnetwork = "host"\n')
    with pytest.raises(PlanError, match=f"{toml}: \\[verifier\\] network must be one of none, bridge \\(got 'host'\\)"):
        _resolve(project, sandbox="docker")


def test_resolve__sandbox_image_only_on_docker(project):
    assert _resolve(project, sandbox="docker", sandbox_image="hemra-base:bookworm").trials
    with pytest.raises(PlanError, match="sandbox.image = 'x:1': only the docker sandbox"):
        _resolve(project, sandbox="host", sandbox_image="x:1")


def test_resolve__run_in_dockerfile_needs_container(project):
    make_task(project / "ds" / "c", dockerfile="FROM ubuntu\nWORKDIR /app\n\nRUN apt-get install -y gcc\n")
    with pytest.raises(PlanError) as info:
        _resolve(project)
    message = str(info.value)
    assert str(project / "ds" / "c" / "environment" / "Dockerfile") in message
    assert "line 4" in message
    assert "RUN apt-get install" in message
    assert "task c" in message


def test_resolve__unsupported_task_excluded_is_fine(project):
    make_task(project / "ds" / "c", dockerfile="FROM ubuntu\nRUN make\n")
    resolved = _resolve(project, exclude=["c"])
    assert {t.task_name for _, t, _ in resolved.trials} == {"a", "b"}


def test_resolve__a_judge_without_a_file_is_refused(project):
    with pytest.raises(PlanError, match=r"judge 'style': no judge file .*judges/style.toml"):
        _resolve(project, judges=["style"])


def _judge_file(project: Path, name: str = "style") -> Path:
    (project / "judges").mkdir(exist_ok=True)
    path = project / "judges" / f"{name}.toml"
    path.write_text('[model]\napi = "openai-chat"\nid = "m-1"\n\n[[criterion]]\nid = "tidy"\ndescription = "Tidy"\n')
    return path


def test_resolve__judges_are_read_beside_the_run_or_taken_as_sent(project):
    _judge_file(project)
    [found] = _resolve(project, judges=["style"]).judges
    assert found.name == "style" and found.fingerprint.startswith("sha256:")
    # A spec the client sent (read on its own machine) is used as it is, once checked.
    sent = judges.load(_judge_file(project, "other")).spec()
    assert _resolve(project, judges=["other"], judge_specs=[sent]).judges == [sent]


def test_resolve__a_sent_judge_is_checked(project):
    sent = judges.load(_judge_file(project)).spec()
    altered = pb.JudgeSpec(
        name="style", fingerprint=sent.fingerprint, definition_json=sent.definition_json.replace("m-1", "m-2")
    )
    with pytest.raises(PlanError, match="fingerprint does not match"):
        _resolve(project, judges=["style"], judge_specs=[altered])
    with pytest.raises(PlanError, match="defined but the run does not name it"):
        _resolve(project, judges=[], judge_specs=[sent])


@pytest.mark.parametrize(
    "field,value,message",
    [
        ("attempts", -1, "attempts must be at least 1"),  # 0 is unset: the default, 1
        ("concurrency", -5, "concurrency must be at least 1"),
        ("timeout_secs", -1, "timeout_secs must be at least 0"),
        ("max_infra_retries", -2, "max_infra_retries must be at least 0"),
        ("attempts", 1001, "attempts must be at most 1,000 \\(got 1,001\\)"),
        ("concurrency", 2**31 - 1, "concurrency must be at most 1,000"),
        ("timeout_secs", 604_801, "timeout_secs must be at most 604,800"),
        ("max_infra_retries", 101, "max_infra_retries must be at most 100"),
    ],
)
def test_resolve__bad_numbers_raise(project, field, value, message):
    with pytest.raises(PlanError, match=message):
        _resolve(project, **{field: value})


def test_resolve__needs_harness_and_dataset(project):
    with pytest.raises(PlanError, match="at least one harness"):
        _resolve(project, harnesses=[])
    with pytest.raises(PlanError, match="at least one dataset"):
        _resolve(project, datasets=[])


def test_resolve__missing_dataset_not_found(project):
    with pytest.raises(NotFound):
        _resolve(project, datasets=["no-such-dataset-anywhere"])


def test_resolve__two_datasets_make_cells_per_dataset(project):
    make_task(project / "ds2" / "z")
    resolved = _resolve(project, datasets=[str(project / "ds"), str(project / "ds2")])
    assert resolved.cells == [(0, 0), (0, 1), (1, 0), (1, 1)]
    assert len(resolved.trials) == (2 + 1) * 2
    assert [c for c, t, _ in resolved.trials if t.task_name == "z"] == [2, 3]


def test_resolve__too_many_trials_raise(project, monkeypatch):
    monkeypatch.setattr(plan, "MAX_TRIALS", 7)
    with pytest.raises(PlanError, match="the run would plan 8 trials; a run holds at most 7"):
        _resolve(project, attempts=2)


@pytest.mark.parametrize(
    "workdir", ["/usr", "/usr/local/src", "/bin", "/lib", "/lib64", "/etc/app", "/proc", "/app/../usr"]
)
def test_resolve__host_workdir_in_a_system_folder_raises_naming_the_line(project, workdir):
    make_task(project / "ds" / "c", dockerfile=f"FROM ubuntu\nWORKDIR /app\n\nWORKDIR {workdir}\n")
    with pytest.raises(PlanError) as info:
        _resolve(project)
    message = str(info.value)
    assert message.startswith(f"{project / 'ds' / 'c' / 'environment' / 'Dockerfile'}: line 4: WORKDIR ")
    assert "host system folder" in message and "task c" in message
    assert _resolve(project, sandbox="docker").trials  # a container has folders of its own


def test_resolve__host_workdir_from_task_toml_raises_naming_the_key(project):
    folder = make_task(project / "ds" / "c")
    (folder / "task.toml").write_text('[environment]\nworkdir = "/usr/src"\n')
    with pytest.raises(PlanError, match=r"task.toml: \[environment\] workdir = '/usr/src': /usr is a host system"):
        _resolve(project)


@pytest.mark.parametrize("workdir", ["/", "/srv", "/work/app", "/usrx"])
def test_resolve__host_workdir_elsewhere_accepted(project, workdir):
    make_task(project / "ds" / "c", dockerfile=f"FROM ubuntu\nWORKDIR {workdir}\n")
    assert _resolve(project).trials


def test_history__a_task_that_keeps_its_history_is_refused_unless_the_run_keeps_it(project):
    (project / "ds" / "a" / "task.toml").write_text("[environment]\nkeep_history = true\n")
    with pytest.raises(PlanError) as raised:
        _resolve(project, sandbox="docker")
    message = str(raised.value)
    assert "keep_history = true" in message and "task a " in message and "--allow-history 'a'" in message
    assert _resolve(project, sandbox="docker", allow_history=["a"]).history_kept == ["a"]
    assert _resolve(project, sandbox="docker", allow_history=["*"]).history_kept == ["a", "b"]


def test_history__a_repository_the_host_sandbox_would_copy_is_refused_unless_the_run_keeps_it(project):
    git_dir = project / "ds" / "b" / "environment" / "repo.git"
    for path in ("HEAD", "objects/ab/cdef", "refs/heads/main"):
        (git_dir / path).parent.mkdir(parents=True, exist_ok=True)
        (git_dir / path).write_text("x\n")
    (project / "ds" / "b" / "environment" / "Dockerfile").write_text(
        "FROM ubuntu:24.04\nWORKDIR /app\nCOPY repo.git /app/\n"
    )
    with pytest.raises(PlanError, match=r"repo.git: a git repository, copied as it is by the host sandbox: task b "):
        _resolve(project)
    assert _resolve(project, allow_history=["b"]).history_kept == ["b"]
    assert _resolve(project, sandbox="docker").history_kept == []  # the docker sandbox strips it


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ('[environment]\nbase_commit = "HEAD~1"\n', "base_commit must be a commit hash"),
        ("[environment]\nkeep_history = 1\n", "keep_history must be true or false"),
    ],
)
def test_history__task_keys_checked(project, toml, message):
    (project / "ds" / "a" / "task.toml").write_text(toml)
    with pytest.raises(PlanError, match=message):
        _resolve(project)
