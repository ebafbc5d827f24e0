#!/usr/bin/env python3
"""Commit messages say why (docs/contributing.md): a subject of 1 to 72
characters, a blank second line, and a body.

  check-commit-messages.py [--repo DIR]   every commit since docs/contributing.md was added
  check-commit-messages.py FILE           one message (git's commit-msg hook passes its file)

Lines git adds as comments (starting with '#') are not part of a message.
Exit 0 when every message holds; 1 with one line per message that does not.
"""
import argparse
import pathlib
import subprocess
import sys

MAX_SUBJECT = 72
RULE_PAGE = "docs/contributing.md"


def problems_in(message):
    lines = [l for l in message.splitlines() if not l.startswith("#")]
    while lines and not lines[-1].strip():
        lines.pop()
    if not lines or not lines[0].strip():
        return ["no subject"]
    out = []
    if len(lines[0]) > MAX_SUBJECT:
        out.append(f"subject is {len(lines[0])} characters; at most {MAX_SUBJECT}")
    if len(lines) < 3 or lines[1].strip() or not any(l.strip() for l in lines[2:]):
        out.append("no body after a blank line: say why")
    return out


def git(repo, *args):
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("file", nargs="?", help="one message to check")
    parser.add_argument("--repo", default=str(pathlib.Path(__file__).resolve().parent.parent))
    a = parser.parse_args()
    if a.file:
        found = problems_in(pathlib.Path(a.file).read_text(encoding="utf-8", errors="replace"))
        for p in found:
            print(f"commit message: {p} ({RULE_PAGE})", file=sys.stderr)
        return 1 if found else 0
    added = git(a.repo, "log", "--format=%H", "--diff-filter=A", "--", RULE_PAGE).split()
    if not added:
        print(f"{RULE_PAGE} is in no commit yet: nothing to hold to it")
        return 0
    # From that commit on, itself included (its parent may be cut off in a shallow clone).
    commits = [added[-1]] + git(a.repo, "rev-list", "--reverse", "--no-merges", f"{added[-1]}..HEAD").split()
    bad = 0
    for c in commits:
        found = problems_in(git(a.repo, "log", "-1", "--format=%B", c))
        for p in found:
            bad += 1
            print(f"FAIL  {c[:10]} {git(a.repo, 'log', '-1', '--format=%s', c).strip()[:60]}: {p}")
    print(f"{len(commits)} commit(s) since {RULE_PAGE} was added, {bad} problem(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
