"""kind = "harbor" harness files at resolve: what is taken, and each bad key refused by name
(the CLI's one line and exit 2 are tests/e2e/test_harbor_harness.py's)."""

import pytest

from hemra.services.domain import harnesses
from hemra.services.domain.planerrors import PlanError
from tests.planner.test_harnesses import write_harness
from tests.planner.test_plan import _resolve, project  # noqa: F401  (project: a fixture)


def test_resolve__harbor_harness(tmp_path):
    text = 'kind = "harbor"\nagent = "claude-code"\nversion = "0.25.0"\nmodel = "anthropic/m"\nenv = ["K"]\n'
    write_harness(tmp_path, "h", text + "[options]\nmax_turns = 3\n")
    loaded = harnesses.resolve("h", tmp_path)
    assert (loaded.kind, loaded.agent, loaded.agent_version, loaded.model, loaded.env) == (
        "harbor",
        "claude-code",
        "0.25.0",
        "anthropic/m",
        ["K"],
    )
    write_harness(tmp_path, "h", text + "[options]\nmax_turns = 4\n")
    assert harnesses.resolve("h", tmp_path).digest != loaded.digest  # options are part of the harness


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('agent = "oracle"\n', "needs version, the exact PyPI version of harbor"),
        ('agent = "oracle"\nversion = ">=0.25"\n', "needs version"),
        ('agent = "oracle"\nversion = "latest"\n', "needs version"),
        ('version = "0.25.0"\n', "needs agent"),
        ('agent = "-x"\nversion = "0.25.0"\n', "needs agent"),
        ('agent = "oracle"\nversion = "0.25.0"\ncommand = "x"\n', "command is not a key of a harbor harness"),
        ('agent = "oracle"\nversion = "0.25.0"\npermission = "deny"\n', "permission is not a key"),
        ('agent = "oracle"\nversion = "0.25.0"\nmodel = 3\n', "model must be a string"),
        ('agent = "oracle"\nversion = "0.25.0"\noptions = 3\n', "options must be a table"),
        ('agent = "oracle"\nversion = "0.25.0"\n[options]\nx = [1]\n', "options.x must be"),
        ('agent = "oracle"\nversion = "0.25.0"\n[options]\n"a b" = 1\n', "options key 'a b' must be a name"),
    ],
)
def test_resolve__bad_harbor_harness_refused_by_name(tmp_path, text, message):
    path = write_harness(tmp_path, "h", 'kind = "harbor"\n' + text)
    with pytest.raises(PlanError, match=message) as info:
        harnesses.resolve("h", tmp_path)
    assert str(info.value).startswith(str(path))


def test_resolve__options_refused_for_other_kinds(tmp_path):
    write_harness(tmp_path, "p", 'kind = "program"\ncommand = "true"\n[options]\nx = 1\n')
    with pytest.raises(PlanError, match="options is a key of harbor harnesses only"):
        harnesses.resolve("p", tmp_path)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"sandbox": "host"}, "run it with --sandbox docker"),
        ({"sandbox_image": "img:1"}, "image and network are for HEMRA's own sandboxes"),
        ({"timeout_secs": 60}, "cannot take timeout_secs"),
        ({"verifier_env": ["TOKEN"]}, r"cannot take \[verifier\] env"),
        ({"verifier_isolation": "fresh"}, r"cannot take \[verifier\] isolation"),
        ({"verifier_network": "bridge"}, r"cannot take \[verifier\] network"),
    ],
)
def test_plan__what_harbor_does_its_own_way_is_refused_by_name(project, fields, message):
    write_harness(project, "hb", 'kind = "harbor"\nagent = "oracle"\nversion = "0.25.0"\n')
    with pytest.raises(PlanError, match=message):
        _resolve(project, harnesses=["oracle", "hb"], **{"sandbox": "docker", **fields})


def test_plan__a_harbor_cell_beside_hemras_own(project):
    write_harness(project, "hb", 'kind = "harbor"\nagent = "oracle"\nversion = "0.25.0"\n')
    resolved = _resolve(project, harnesses=["oracle", "hb"], sandbox="docker")
    assert [h.kind for h in resolved.harnesses] == ["builtin", "harbor"] and len(resolved.trials) == 4
