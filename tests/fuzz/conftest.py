"""Hypothesis profiles for the fuzz suite: "ci" (default: bounded, derandomized, so a CI run is
the same every time) and "long" (HEMRA_FUZZ=long, `make fuzz`: many more examples, random draws).
Each test names its CI budget with examples(n); the long profile multiplies it.

And the real data the fuzz starts from: a finished run and its export (`hemra export`)."""

import pytest
from hypothesis import HealthCheck, settings

from tests.conftest import clean_env
from tests.e2e.helpers import hemra
from tests.fuzz.deployment import deployment  # noqa: F401  (a fixture, for the fuzz tests)
from tests.fuzz.mutate import PROFILE

_COMMON = dict(deadline=None, database=None, suppress_health_check=list(HealthCheck), print_blob=True)
settings.register_profile("ci", derandomize=True, **_COMMON)
settings.register_profile("long", derandomize=False, **_COMMON)
settings.load_profile(PROFILE)

#: The label of the one run in fuzz_home, and the tasks it ran.
LABEL = "fuzz"
TASKS = ("text-stats", "csv-column-sum", "reverse-lines")


@pytest.fixture(scope="session")
def fuzz_home(tmp_path_factory):
    """A HEMRA_HOME with one finished run (oracle passes, nop fails, on three tasks of
    hemra-offline), and that run exported by `hemra export` beside it (fuzz_export)."""
    root = tmp_path_factory.mktemp("fuzz")
    env = clean_env()
    env["HEMRA_HOME"] = str(root / "home")
    tasks = [arg for name in TASKS for arg in ("-t", name)]
    result = hemra(env, "run", "-H", "oracle", "-H", "nop", "-d", "hemra-offline", *tasks, "--label", LABEL)
    assert result.returncode == 0, result.stderr
    result = hemra(env, "export", LABEL, "--out", str(root / "export"))
    assert result.returncode == 0, result.stderr
    return root / "home"


@pytest.fixture(scope="session")
def fuzz_export(fuzz_home):
    """The folder `hemra export` wrote for fuzz_home's run."""
    return fuzz_home.parent / "export"
