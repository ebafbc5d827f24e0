#!/usr/bin/env python3
"""Checks every relative link and anchor in rung's Markdown.

Files checked: README.md, docs/*.md and every other tracked *.md under the
repository (build trees, .git and fetched caches left out). For each link
[text](TARGET) or reference definition [label]: TARGET outside a fenced code
block and outside inline code:

  - http(s)://, mailto: and other URL schemes are ignored;
  - a path is resolved against the linking file's folder and must exist;
  - `#anchor` (alone or after a .md path) must name a heading of that file
    under GitHub's rules: lowercase, spaces to '-', punctuation dropped, the
    second heading of a text gets -1, the third -2 and so on.

Each broken link is printed as FILE:LINE: broken link TARGET (why); exit 1 if
any. `--root DIR` checks another tree; `--self-test` plants broken links in a
scratch tree and checks that exactly those are found.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import urllib.parse
from pathlib import Path

SKIP_DIRS = {".git", "build", "build-mutate", "node_modules", ".cache"}
FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
INLINE_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*<?([^)\s>]*)>?(?:\s+[\"'(][^)]*)?\)")
REF_DEF = re.compile(r"^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$")
HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)[ \t]*#*[ \t]*$")
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def markdown_files(root: Path):
    """README.md, docs/*.md and the other tracked .md files (all .md outside build trees when git is absent)."""
    files = set()
    try:
        out = subprocess.run(["git", "-C", str(root), "ls-files", "-co", "--exclude-standard", "*.md"],
                             capture_output=True, text=True, check=True).stdout
        files.update(root / line for line in out.splitlines() if line)
    except (OSError, subprocess.CalledProcessError):
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = [d for d in dirnames if d not in SKIP_DIRS and not d.startswith("build")]
            files.update(Path(dirpath) / f for f in filenames if f.endswith(".md"))
    for p in [root / "README.md", *sorted((root / "docs").glob("*.md"))]:
        if p.is_file():
            files.add(p)
    return sorted(f for f in files if f.is_file() and not any(part in SKIP_DIRS for part in f.relative_to(root).parts[:-1]))


def strip_inline_code(line: str) -> str:
    """Blanks out `code spans` so that links written inside them are not taken as links."""
    out, i = [], 0
    while i < len(line):
        if line[i] == "`":
            j = i
            while j < len(line) and line[j] == "`":
                j += 1
            ticks = line[i:j]
            end = line.find(ticks, j)
            if end == -1:
                out.append(line[i:j])
                i = j
                continue
            out.append(" " * (end + len(ticks) - i))
            i = end + len(ticks)
        else:
            out.append(line[i])
            i += 1
    return "".join(out)


def prose_lines(text: str):
    """(line number, line) for every line outside fenced code blocks."""
    fence = None
    for number, line in enumerate(text.split("\n"), 1):
        m = FENCE.match(line)
        if fence is None:
            if m:
                fence = m.group(1)
                continue
            yield number, line
        elif m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) and line.strip() == m.group(1):
            fence = None


def slug(heading: str) -> str:
    """GitHub's anchor for a heading's text (before duplicates are numbered)."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link in a heading: its text
    text = re.sub(r"<[^>]+>", "", text)                        # inline HTML tags
    text = text.strip().lower()
    text = "".join(c for c in text if c.isalnum() or c in " -_")
    return text.replace(" ", "-")


def anchors(path: Path, cache: dict):
    if path not in cache:
        seen, result = {}, set()
        for _, line in prose_lines(path.read_text(encoding="utf-8", errors="replace")):
            m = HEADING.match(line)
            if not m:
                continue
            base = slug(m.group(2))
            n = seen.get(base, 0)
            result.add(base if n == 0 else f"{base}-{n}")
            seen[base] = n + 1
        cache[path] = result
    return cache[path]


def links(text: str):
    for number, line in prose_lines(text):
        bare = strip_inline_code(line)
        m = REF_DEF.match(bare)
        if m:
            yield number, m.group(1)
            continue
        for m in INLINE_LINK.finditer(bare):
            yield number, m.group(1)


def check(root: Path):
    root = root.resolve()
    problems, cache = [], {}
    for md in markdown_files(root):
        text = md.read_text(encoding="utf-8", errors="replace")
        shown = md.relative_to(root)
        for number, target in links(text):
            if not target or SCHEME.match(target) or target.startswith("//"):
                continue
            path_part, _, anchor = target.partition("#")
            path_part = urllib.parse.unquote(path_part)
            anchor = urllib.parse.unquote(anchor)
            if path_part.startswith("/"):
                dest = root / path_part.lstrip("/")
            elif path_part:
                dest = (md.parent / path_part).resolve()
            else:
                dest = md
            if not dest.exists():
                problems.append(f"{shown}:{number}: broken link {target} (no such file: {path_part})")
                continue
            if not anchor:
                continue
            if dest.is_dir() or dest.suffix.lower() != ".md":
                if not re.fullmatch(r"L\d+(-L\d+)?", anchor):
                    problems.append(f"{shown}:{number}: broken link {target} (an anchor into a file that is not Markdown)")
                continue
            if anchor.lower() not in anchors(dest, cache):
                where = "this file" if dest == md else str(dest.relative_to(root)) if dest.is_relative_to(root) else str(dest)
                problems.append(f"{shown}:{number}: broken link {target} (no heading '{anchor}' in {where})")
    return problems


def self_test() -> int:
    with tempfile.TemporaryDirectory(prefix="check-links-") as tmp:
        root = Path(tmp)
        (root / "docs").mkdir()
        (root / "README.md").write_text(
            "# Front page\n\n"
            "See [the probe](docs/probe.md) and [its cache](docs/probe.md#the-cache).\n"
            "A [missing page](docs/nothing.md) and [a missing heading](docs/probe.md#no-such-heading).\n"
            "An [outside link](https://example.com/x.md#y) and [here](#front-page).\n"
            "Inline code is not a link: `[x](docs/gone.md)`.\n\n"
            "```sh\n[inside a fence](docs/also-gone.md)\n```\n")
        (root / "docs" / "probe.md").write_text(
            "# `rung probe`\n\n## The cache\n\n## The cache\n\n"
            "Back to [the front page](../README.md#front-page), [the second](#the-cache-1) "
            "and [the first](#rung-probe).\n")
        found = check(root)
    expected = [
        "README.md:4: broken link docs/nothing.md (no such file: docs/nothing.md)",
        "README.md:4: broken link docs/probe.md#no-such-heading (no heading 'no-such-heading' in docs/probe.md)",
    ]
    if found != expected:
        print("check-links self-test failed: expected exactly", *expected, "found", *(found or ["nothing"]),
              sep="\n  ", file=sys.stderr)
        return 1
    print("check-links self-test: the two broken links were found, and nothing else")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent)
    parser.add_argument("--self-test", action="store_true", help="check the checker on a planted tree")
    args = parser.parse_args()
    if args.self_test:
        return self_test()
    problems = check(args.root)
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} broken link(s) (tools/check-links.py)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
