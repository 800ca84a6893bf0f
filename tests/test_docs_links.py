"""docs/ and README.md hold together: every relative link names a file that exists and, with an
#anchor, a heading in it; the index links the Install and Concepts pages; its "Not yet" list
names only what the code refuses."""

import re
from pathlib import Path

import pytest

from hemra.services.domain import harnesses
from hemra.services.planner import datasets, plan
from tests.conftest import REPO

PAGES = sorted((REPO / "docs").glob("*.md")) + [REPO / "README.md"]
_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)
    found, seen = set(), {}
    for match in re.finditer(r"^#{1,6} (.+)$", text, re.M):
        name = slug(match.group(1))
        found.add(f"{name}-{seen[name]}" if name in seen else name)  # a repeated heading: -1, -2, ...
        seen[name] = seen.get(name, 0) + 1
    return found


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_relative_link_resolves(page):
    text = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)
    broken = []
    for target in _LINK.findall(text):
        if re.match(r"^[a-z]+:", target):
            continue  # http(s), mailto
        path, _, anchor = target.partition("#")
        linked = (page.parent / path).resolve() if path else page
        if not linked.exists():
            broken.append(target)
        elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
            broken.append(target)
    assert broken == [], f"{page.name}: links to nothing: {broken}"


def test_the_index_links_install_and_concepts_and_its_not_yet_list_agrees_with_the_code():
    index = (REPO / "docs" / "index.md").read_text()
    assert "(install.md)" in index and "(concepts.md)" in index
    not_yet = index[index.index("| Not yet |") :]
    for kind in harnesses.KINDS:  # every harness kind is driven
        assert f"`{kind}`" not in not_yet, kind
    for sandbox in plan.SANDBOXES:
        assert f"`--sandbox {sandbox}`" not in not_yet
    for prefix in datasets.SOURCES:  # every dataset source the planner resolves is available
        assert prefix not in not_yet, prefix
    concepts = (REPO / "docs" / "concepts.md").read_text()
    nouns = ("dataset", "task", "harness", "sandbox", "run", "cell", "trial", "attempt", "job", "score", "import")
    assert all(f"| **{noun}** |" in concepts for noun in nouns)
    assert "```mermaid" in concepts
