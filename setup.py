"""The package list for the wheel; everything else is declared in pyproject.toml.

The design's folders (services/, clients/, gateway/) install under the one `hemra` package
([tool.setuptools] package-dir), and setuptools' find cannot prefix what it finds, so each
mapped folder's packages are listed here under their installed names: a new subpackage ships
without editing a list.
"""

import tomllib
from pathlib import Path

from setuptools import find_namespace_packages, setup

ROOT = Path(__file__).resolve().parent


def installed_packages() -> list[str]:
    mapping = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    packages = []
    for name, folder in mapping.items():
        packages.append(name)
        packages += [
            f"{name}.{sub}"
            for sub in find_namespace_packages(str(ROOT / folder), exclude=["*node_modules*", "*__pycache__*"])
            if f"{name}.{sub}" not in mapping
        ]
    return sorted(set(packages))


setup(packages=installed_packages())
