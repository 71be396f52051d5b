"""The README and docs/ say what the code does: every relative link and anchor resolves, every page is in
the index, the README's two commands are the scripts CI runs, and every option written after
``manage.py COMMAND`` in the documentation is an option of that command's parser."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest
from django.core.management import get_commands, load_command_class

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
# Written on other branches at the same time as this index; the merge brings them. Once they are in,
# they are checked like every other page.
PAGES_OF_OTHER_BRANCHES: set[str] = set()
# New pages whose README link the lead adds on merge (branches do not edit the README); empty it then.
PAGES_AWAITING_README_LINK: set[str] = set()


def documentation_files() -> list[Path]:
    return [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]


def without_code_blocks(text: str) -> str:
    return re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)


def heading_anchors(markdown: str) -> set[str]:
    """The anchors GitHub gives the headings: lowercased, punctuation but `-` and `_` dropped, spaces to
    `-`, repeats numbered."""
    anchors: set[str] = set()
    seen: dict[str, int] = {}
    for level_and_text in re.findall(r"^#{1,6}\s+(.+)$", without_code_blocks(markdown), flags=re.M):
        text = re.sub(r"`([^`]*)`", r"\1", level_and_text).strip().lower()
        slug = re.sub(r"[^\w\- ]", "", text).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        anchors.add(slug if count == 0 else f"{slug}-{count}")
    return anchors


def relative_links(path: Path) -> list[str]:
    links = re.findall(r"\]\(([^)\s]+)\)", without_code_blocks(path.read_text()))
    return [link for link in links if not re.match(r"[a-z][a-z0-9+.-]*:", link)]


def broken_links(path: Path) -> list[str]:
    broken = []
    for link in relative_links(path):
        target, _, anchor = link.partition("#")
        destination = (path.parent / target).resolve() if target else path
        if not destination.exists():
            if destination.parent == DOCS and destination.name in PAGES_OF_OTHER_BRANCHES:
                continue
            broken.append(f"{link}: no such file")
        elif (
            anchor and destination.suffix == ".md" and anchor not in heading_anchors(destination.read_text())
        ):
            broken.append(f"{link}: no heading with that anchor")
    return broken


@pytest.mark.parametrize("path", documentation_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_and_anchor_resolves(path):
    assert relative_links(path)  # every page links on; an empty list here means the pattern broke
    assert broken_links(path) == []


def test_the_link_check_finds_a_missing_page_and_a_missing_anchor(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(
        "# A page\n\n## `bench_x.py` and more\n\n[ok](#bench_xpy-and-more) [gone](other.md) [bad](#nope)\n"
    )
    assert broken_links(page) == ["other.md: no such file", "#nope: no heading with that anchor"]


def test_every_docs_page_is_in_the_index_and_linked_from_the_readme():
    index = {link.partition("#")[0] for link in relative_links(DOCS / "README.md")}
    readme = {Path(link.partition("#")[0]).name for link in relative_links(ROOT / "README.md")}
    pages = {path.name for path in DOCS.glob("*.md")} - {"README.md"}
    assert pages | PAGES_OF_OTHER_BRANCHES <= index
    assert (pages | PAGES_OF_OTHER_BRANCHES) - PAGES_AWAITING_README_LINK <= readme


def test_the_readme_is_a_front_page_with_the_two_commands_ci_runs():
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 200
    assert "bash scripts/demo.sh    # 1. demo" in readme
    assert "bash scripts/test.sh    # 2. the whole test suite" in readme
    assert (ROOT / "scripts" / "demo.sh").is_file()
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert "bash scripts/test.sh" in ci  # the README's command, then the quick leg on the newest Python
    assert ci[-1] == "exec bash scripts/test_newest.sh"


def option_strings(parser: argparse.ArgumentParser) -> set[str]:
    """Every option of a command's parser, its subcommands' included."""
    options: set[str] = set()
    for action in parser._actions:
        options.update(action.option_strings)
        if isinstance(action, argparse._SubParsersAction):
            for subparser in action.choices.values():
                options |= option_strings(subparser)
    return options


def documented_command_options() -> list[tuple[str, str, str]]:
    """(file, command, option) for every `--option` written after `manage.py COMMAND` on one line (a
    backslash continues the line)."""
    found = []
    for path in documentation_files():
        text = path.read_text().replace("\\\n", " ")
        for command, rest in re.findall(r"manage\.py (\w+)([^\n`|]*)", text):
            for option in re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", rest):
                found.append((str(path.relative_to(ROOT)), command, option))
    return found


def test_every_documented_command_option_exists():
    commands = get_commands()
    documented = documented_command_options()
    assert len(documented) > 100  # the pages document the commands' options, and the pattern finds them
    wrong = []
    for where, command, option in documented:
        if command not in commands:
            wrong.append(f"{where}: no command {command}")
            continue
        parser = load_command_class(commands[command], command).create_parser("manage.py", command)
        if option not in option_strings(parser):
            wrong.append(f"{where}: manage.py {command} has no {option}")
    assert wrong == []
