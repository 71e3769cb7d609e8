"""The README and docs/ (issue 19): a README a new user reads through, and no link into docs/ that leads nowhere.

README.md is at most MAX_README_LINES; its Quick start block holds exactly the two
commands; every relative link in README.md and docs/*.md names a file that exists and,
with a #fragment, a heading of that file (GitHub's anchors: lower case, punctuation
dropped, spaces to hyphens). tests/README.md names each file of the real tiers with its
count of tests there, as pytest collects them (issue 40).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
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


# --- tests/README.md: which tier each file is in ---------------------------------------------------

TESTS_README = REPO / "tests" / "README.md"
TIER_ITEM = re.compile(r"^- \*\*(?P<tier>Side by side|Alone)\*\* \(`[^`]*`\): (?P<files>.*?)\.$", re.M | re.S)
# Loaded into a collecting pytest (-p): prints each real test's tier and file, and each module skipped at import.
TIER_PLUGIN = """
def pytest_collectreport(report):
    if report.skipped:
        print("SKIPPED\\t" + report.nodeid.split("::")[0])


def pytest_collection_finish(session):
    for item in session.items:
        if any(item.get_closest_marker(mark) for mark in ("slow", "browser", "simulation")):
            print(("Alone" if item.get_closest_marker("alone") else "Side by side") + "\\t" + item.nodeid.split("::")[0])
"""


def listed_tiers(text: str) -> dict[str, dict[str, int]]:
    """Return {tier: {file stem: tests}} as the README's "Which tier each file is in" lists them."""
    section = text.split("### Which tier each file is in", 1)[1].split("\n## ", 1)[0]
    return {
        m["tier"]: {name: int(count) for name, count in re.findall(r"(test_\w+) \((\d+)\)", m["files"])}
        for m in TIER_ITEM.finditer(section)
    }


def collected_tiers(tmp_path: Path) -> tuple[dict[str, dict[str, int]], set[str]]:
    """Return ({tier: {file stem: tests}}, the files skipped at import) as pytest collects every test here, its markers read."""
    (tmp_path / "tier_plugin.py").write_text(TIER_PLUGIN)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), env.get("PYTHONPATH", "")])
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-m", "", "-n", "0", "-p", "no:cacheprovider", "-p", "tier_plugin"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    tiers: dict[str, dict[str, int]] = {"Side by side": {}, "Alone": {}}
    skipped = set()
    for line in done.stdout.splitlines():
        tier, _, path = line.partition("\t")
        stem = Path(path).stem
        if tier == "SKIPPED":
            skipped.add(stem)
        elif tier in tiers:
            tiers[tier][stem] = tiers[tier].get(stem, 0) + 1
    return tiers, skipped


@pytest.mark.slow  # starts a pytest that collects every test (4 s of CPU): the side tier's
def test_the_tests_readme_names_every_real_tests_file_in_its_tier_with_its_count(tmp_path):
    listed = listed_tiers(TESTS_README.read_text())
    collected, skipped = collected_tiers(tmp_path)
    assert set(listed) == {"Side by side", "Alone"} and all(listed.values()), listed
    for tier, files in collected.items():
        shown = {name: count for name, count in listed[tier].items() if name not in skipped}
        assert shown == {name: count for name, count in files.items() if name not in skipped}, f"tests/README.md, {tier}"


def test_the_tier_list_is_read_as_written():
    text = "### Which tier each file is in\n\n- **Side by side** (`x`): test_a (2),\n  test_b (1).\n- **Alone** (`y`): test_c (3).\n\n## Names\n"
    assert listed_tiers(text) == {"Side by side": {"test_a": 2, "test_b": 1}, "Alone": {"test_c": 3}}
    assert listed_tiers(text.replace("test_b (1)", "test_b (4)"))["Side by side"]["test_b"] == 4
