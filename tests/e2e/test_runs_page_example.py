"""The Runs page's example run file, run as it is written there with only its harness and judge
names swapped for bundled ones (tests/fixtures/runs-page/hemra.toml): its `[sandbox] image`
without a sandbox runs on docker, and the run header says so."""

import shutil

import pytest

from tests.conftest import REPO
from tests.e2e.helpers import hemra, show
from tests.modelserver import ModelServer, parse

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("docker_engine")]

FIXTURE = REPO / "tests" / "fixtures" / "runs-page"
#: The example's image. Offline, the engine cannot pull it: the base image stands in under its
#: name (as setup-docker.sh does for debian:bookworm-slim), tagged here only when it is missing.
IMAGE = "alpine:3.20"


@pytest.fixture
def example_image(docker_engine):
    try:
        docker_engine.images.get(IMAGE)
        yield IMAGE
        return
    except Exception:  # absent: tag the base image under its name, and untag it afterwards
        docker_engine.images.get("debian:bookworm-slim").tag(IMAGE)
    try:
        yield IMAGE
    finally:
        docker_engine.images.remove(IMAGE, noprune=True)


def test_the_runs_page_example_runs_on_docker(hemra_env, tmp_path, example_image):
    folder = tmp_path / "eval"
    shutil.copytree(FIXTURE, folder)
    with ModelServer(parse({"judge": [{"judge": "rubric"}]})) as server:
        env = {**hemra_env, "HEMRA_JUDGE_BASE_URL": server.url, "HEMRA_JUDGE_API_KEY": "scripted-key"}
        result = hemra(env, "run", str(folder / "hemra.toml"), timeout=900)
    assert result.returncode == 0, result.stderr + result.stdout
    header = result.stdout.splitlines()[0]
    assert header.startswith("run r-") and "(harnesses), concurrency 2" in header, header
    assert "sandbox docker: every task built on alpine:3.20" in header, header
    data = show(env, "harnesses")
    spec = data["run"]["spec"]
    assert (spec["sandbox"], spec["sandbox_image"], spec["verifier_network"]) == ("docker", IMAGE, "bridge")
    attempts = data["attempts"]
    assert len(attempts) == 2 * 2 * 3  # datasets x harnesses x attempts, one task each
    verdicts = {(a["dataset_name"], a["harness_name"], a["verdict"]) for a in attempts}
    assert verdicts == {
        (d, h, v) for d in ("hemra-offline", "text-tools") for h, v in (("oracle", "passed"), ("nop", "failed"))
    }
    assert all([s["judge"] for s in a["judge_scores"]] == ["reward-hacking"] for a in attempts)
