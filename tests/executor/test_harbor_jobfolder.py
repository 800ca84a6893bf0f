"""Following a Harbor job folder as Harbor writes it: a trial counts once its result.json reads
whole; a half-written one is read again on the next poll. The trials are a real Harbor 0.25
job's (tests/fixtures/harbor), so what is read is what the supervisor completes jobs from."""

import json
import shutil
import tarfile
from pathlib import Path

from hemra.services.common import harbor_options
from hemra.services.executor.harbor.jobfolder import Follower
from hemra.services.executor.harbor.supervise import command

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "harbor"


def job(tmp_path: Path, name: str) -> Path:
    with tarfile.open(FIXTURES / name) as archive:
        archive.extractall(tmp_path, filter="tar")
    [root] = [p for p in tmp_path.iterdir() if p.is_dir()]
    return root


def test_follower__reads_each_trial_once_and_retries_a_torn_result(tmp_path):
    source = job(tmp_path / "real", "harbor-0.25-oracle.tar")
    live = tmp_path / "live"
    live.mkdir()
    follower = Follower(live)
    assert follower.poll() == []
    trials = sorted(p.name for p in source.iterdir() if p.is_dir())
    # The first trial as Harbor starts it: no result.json yet.
    shutil.copytree(source / trials[0], live / trials[0], ignore=shutil.ignore_patterns("result.json"))
    assert follower.poll() == []
    # Harbor's plain write caught half way.
    whole = (source / trials[0] / "result.json").read_bytes()
    (live / trials[0] / "result.json").write_bytes(whole[: len(whole) // 2])
    assert follower.poll() == [] and follower.torn == {trials[0]: 1}
    (live / trials[0] / "result.json").write_bytes(whole)
    [finished] = follower.poll()
    assert finished.folder == trials[0] and finished.trial.outcome == "completed"
    assert finished.trial.rewards == {"reward": 1.0}
    assert "result.json" in {e.path for e in finished.entries}
    assert follower.torn == {} and follower.poll() == []  # never twice
    for name in trials[1:]:
        shutil.copytree(source / name, live / name)
    assert sorted(f.folder for f in follower.poll()) == trials[1:]


def test_follower__a_cancelled_trial_is_cancelled_and_ungraded(tmp_path):
    source = job(tmp_path / "real", "harbor-0.25-nop.tar")
    name = sorted(p.name for p in source.iterdir() if p.is_dir())[0]
    result = source / name / "result.json"
    # As Harbor writes a trial SIGTERM cancelled (judges-datasets.md §4): CancelledError, no verifier result.
    data = json.loads(result.read_text())
    data["exception_info"] = {"exception_type": "CancelledError", "exception_message": ""}
    data["verifier_result"] = None
    result.write_text(json.dumps(data, indent=4))
    finished = next(f for f in Follower(source).poll() if f.folder == name)
    assert finished.trial.outcome == "cancelled" and finished.trial.rewards is None


def test_command__runs_harbor_offline_on_the_gathered_tasks(tmp_path):
    class Harness:
        agent, model, agent_version, harness_name, source_path = "nop", "", "0.25.0", "h", ""
        source_text = 'kind = "harbor"\nagent = "nop"\nversion = "0.25.0"\n[options]\nmax_turns = 3\nfast = true\n'

    class Job:
        harness = Harness()
        attempt = type("A", (), {"id": "a-1"})()
        spec = type("S", (), {"model": "", "concurrency": 2})()

        def __init__(self, digest):
            self.task = type("T", (), {"digest": digest})()

    argv = command(tmp_path / "tool", Job("x"), [Job("x"), Job("x"), Job("y")], tmp_path, tmp_path / "o.yaml")
    joined = " ".join(argv)
    assert "-I" in argv and " run -p " in joined and "-a nop" in joined and "-e docker" in joined
    # the three gathered trials, two at a time (the run's concurrency)
    assert "-n 2 -k 2 -r 0" in joined and "--job-name hemra-a-1" in joined
    assert "--ak max_turns=3 --ak fast=true" in joined and "--extra-docker-compose" in joined
    assert harbor_options.agent_kwargs({"options": {"a": 1.5}}) == ["a=1.5"]
