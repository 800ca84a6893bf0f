"""SWE-bench's own code, loaded for what HEMRA needs of it: the markers its eval scripts print
and its grading of a test log. The `swebench` package is an optional dependency (hemra[swebench]).

Its `swebench.harness` package imports docker, modal and datasets when it is imported, and
loads a `.env` file from the working directory into the environment; the constants and the
grading need none of that. So the harness package is registered as a bare package of its
folder, and only the modules asked for (and what they import) run.
"""

import importlib
import sys
import types
from pathlib import Path

PACKAGE = "swebench==5.0.2"


class Missing(Exception):
    """The swebench package is not installed."""


def module(name: str):
    """`swebench.harness.<name>` (constants, grading, log_parsers), without the harness
    package's own __init__."""
    try:
        import swebench
    except ImportError:
        raise Missing(f"SWE-bench tasks need the swebench package: pip install 'hemra[swebench]' ({PACKAGE})") from None
    if "swebench.harness" not in sys.modules:
        harness = types.ModuleType("swebench.harness")
        harness.__path__ = [str(Path(swebench.__file__).parent / "harness")]
        sys.modules["swebench.harness"] = harness
    return importlib.import_module(f"swebench.harness.{name}")


def version() -> str:
    import swebench

    return swebench.__version__
