"""The README and docs/ (issue 19): a README a new user reads through, and no link into docs/ that leads nowhere.

README.md is at most MAX_README_LINES; its Quick start block holds exactly the two
commands; every relative link in README.md and docs/*.md names a file that exists and,
with a #fragment, a heading of that file (GitHub's anchors: lower case, punctuation
dropped, spaces to hyphens).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
MAX_README_LINES = 300
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
LINK = re.compile(r"\[[^\]]*\]\((?P<target>[^)\s]+)\)")
HEADING = re.compile(r"^#{1,6} (?P<title>.+?)\s*$", re.M)
FENCE = re.compile(r"^```.*?^```", re.M | re.S)


def anchor(title: str) -> str:
    """Return GitHub's anchor of a heading: '`run_bench.sh`: the run' -> 'run_benchsh-the-run'."""
    text = re.sub(r"[^\w\- ]", "", title.lower().replace("`", ""))
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """Return the anchors of every heading of a Markdown file (outside code blocks)."""
    return {anchor(m["title"]) for m in HEADING.finditer(FENCE.sub("", path.read_text()))}


def links(path: Path) -> list[str]:
    """Return the relative link targets of a Markdown file (outside code blocks)."""
    return [m["target"] for m in LINK.finditer(FENCE.sub("", path.read_text())) if not re.match(r"[a-z]+:", m["target"])]


def test_the_readme_is_short():
    assert len((REPO / "README.md").read_text().splitlines()) <= MAX_README_LINES


def test_the_quick_start_block_holds_the_two_commands():
    section = (REPO / "README.md").read_text().split("## Quick start", 1)[1]
    block = FENCE.search(section)[0]
    commands = [line.split("#", 1)[0].strip() for line in block.splitlines()[1:-1]]
    assert commands == ["./run_bench.sh && wrkreport build", "./run_tests.sh"]


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(REPO)))
def test_every_relative_link_leads_somewhere(doc):
    broken = []
    for target in links(doc):
        file, _, fragment = target.partition("#")
        path = (doc.parent / file).resolve() if file else doc
        if not path.exists():
            broken.append(f"{target}: no such file")
        elif fragment and path.suffix == ".md" and fragment not in anchors(path):
            broken.append(f"{target}: no heading #{fragment} in {path.name}")
    assert broken == []


def test_the_anchor_rule_and_the_link_check_can_fail(tmp_path):
    assert anchor("`run_bench.sh`: the setups, the run") == "run_benchsh-the-setups-the-run"
    doc = tmp_path / "a.md"
    doc.write_text("# Title\n\n[ok](#title) [gone](b.md) [no heading](#nope)\n")
    assert links(doc) == ["#title", "b.md", "#nope"] and anchors(doc) == {"title"}
