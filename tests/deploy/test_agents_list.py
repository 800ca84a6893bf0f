"""deploy/agents.txt is the image's copy of what the cli drivers and the agent tests already say:
a package, a Node.js need or a version changed on one side only would ship an image whose
pre-installed agents are not the ones HEMRA runs and tests."""

import re
import tomllib
from pathlib import Path

from hemra.services.executor.harnesses.cli import driver
from tests.e2e.test_cli_agents import PINNED
from tests.e2e.test_harbor_harness import EXAMPLES, VERSION

AGENTS_TXT = Path(__file__).resolve().parents[2] / "deploy" / "agents.txt"


def _rows() -> dict[str, tuple[str, str, bool]]:
    rows = {}
    for line in AGENTS_TXT.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            agent, package, version, node = line.split()
            assert node in ("yes", "no"), f"agents.txt: {agent}: node column is {node!r}"
            rows[agent] = (package, version, node == "yes")
    return rows


def test_the_image_lists_every_cli_agent_the_tests_pin():
    assert sorted(_rows()) == sorted(PINNED)


def test_each_row_matches_its_driver_and_the_tested_version():
    for agent, (package, version, needs_node) in _rows().items():
        d = driver(agent)
        assert (package, needs_node) == (d.package, d.needs_node), agent
        assert version == PINNED[agent], agent


def test_the_images_harbor_is_the_version_the_tests_and_the_examples_run():
    """build-image.sh installs one Harbor into the image: the one the harbor tests run and the
    documented example harnesses name, so that the image's executors need no PyPI for them."""
    script = (AGENTS_TXT.parent / "build-image.sh").read_text()
    [image_version] = re.findall(r"(?m)^HARBOR_VERSION=(\S+)$", script)
    assert image_version == VERSION
    for example in ("harbor-oracle", "harbor-nop"):
        assert tomllib.loads((EXAMPLES / f"{example}.toml").read_text())["version"] == VERSION, example
