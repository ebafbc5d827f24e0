#!/usr/bin/env python3
"""Reads lcov's tracefile of rung's code and says which rules no test reaches.

Prints, per file (the files with most untaken branches first), every line with a
branch no test took, and writes the figures (whole, per concept folder) to --summary.
A branch whose line never ran is counted as not taken, as lcov counts it.

  coverage_report.py build-coverage/coverage/rung.info --root . --summary S.txt
"""

import argparse
import collections
import os
import sys
from dataclasses import dataclass, field


@dataclass
class FileCounts:
    lines: dict = field(default_factory=dict)     # line -> times run
    branches: dict = field(default_factory=dict)  # (line, block, branch) -> times taken; None: never reached

    @property
    def lines_found(self):
        return len(self.lines)

    @property
    def lines_hit(self):
        return sum(1 for c in self.lines.values() if c > 0)

    @property
    def branches_found(self):
        return len(self.branches)

    @property
    def branches_hit(self):
        return sum(1 for t in self.branches.values() if t)

    def branches_by_line(self):
        by_line = collections.defaultdict(list)
        for (number, _block, _branch), taken in sorted(self.branches.items()):
            by_line[number].append(taken)
        return by_line


def read_tracefile(path):
    """One FileCounts per source file; the records of one file (several objects include it) add up."""
    files = collections.defaultdict(FileCounts)
    current = None
    with open(path, encoding="utf-8", errors="replace") as f:
        for raw in f:
            line = raw.rstrip("\n")
            if line.startswith("SF:"):
                current = files[line[3:]]
            elif current is None:
                continue
            elif line.startswith("DA:"):
                number, count = line[3:].split(",")[:2]
                current.lines[int(number)] = current.lines.get(int(number), 0) + int(count)
            elif line.startswith("BRDA:"):
                number, block, branch, taken = line[5:].split(",")
                key = (int(number), block, branch)
                value = None if taken == "-" else int(taken)
                old = current.branches.get(key)
                current.branches[key] = value if old is None else old + (value or 0)
            elif line == "end_of_record":
                current = None
    return files


def percent(hit, found):
    return f"{100.0 * hit / found:.1f}%" if found else "-"


def concept_of(relative):
    parts = relative.split("/")
    return "/".join(parts[:2]) if parts[0] == "src" and len(parts) > 2 else parts[0]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tracefile")
    parser.add_argument("--root", default=".")
    parser.add_argument("--summary", help="where to write the figures")
    parser.add_argument("--failed-tests", type=int, default=0, help="how many tests failed in the run counted")
    args = parser.parse_args()

    root = os.path.realpath(args.root)
    files = read_tracefile(args.tracefile)
    if not files:
        print(f"coverage_report: {args.tracefile} holds no source file", file=sys.stderr)
        return 2

    rows = []
    for path, counts in files.items():
        relative = os.path.relpath(os.path.realpath(path), root)
        rows.append((relative, counts))
    rows.sort(key=lambda r: (-(r[1].branches_found - r[1].branches_hit), r[0]))

    for relative, counts in rows:
        untaken = counts.branches_found - counts.branches_hit
        if untaken == 0:
            continue
        print(f"{relative}: {untaken} branches never taken; branches {counts.branches_hit} of "
              f"{counts.branches_found} taken ({percent(counts.branches_hit, counts.branches_found)}), "
              f"lines {counts.lines_hit} of {counts.lines_found}")
        by_line = counts.branches_by_line()
        for number in sorted(by_line):
            taken = by_line[number]
            missing = sum(1 for t in taken if not t)
            if not missing:
                continue
            never_ran = all(t is None for t in taken)
            note = " (the line never ran)" if never_ran else ""
            print(f"  {relative}:{number}: {missing} of {len(taken)} never taken{note}")

    by_concept = collections.defaultdict(lambda: [0, 0, 0, 0])
    for relative, counts in rows:
        c = by_concept[concept_of(relative)]
        c[0] += counts.lines_hit
        c[1] += counts.lines_found
        c[2] += counts.branches_hit
        c[3] += counts.branches_found
    lines_hit = sum(c[0] for c in by_concept.values())
    lines_found = sum(c[1] for c in by_concept.values())
    branches_hit = sum(c[2] for c in by_concept.values())
    branches_found = sum(c[3] for c in by_concept.values())
    summary = [
        f"rung's code (src/ and cli/), {len(rows)} files: lines {lines_hit} of {lines_found} "
        f"({percent(lines_hit, lines_found)}), branches {branches_hit} of {branches_found} "
        f"({percent(branches_hit, branches_found)})"
        + (f"; {args.failed_tests} tests failed in the run counted" if args.failed_tests else ""),
        "",
        f"{'concept':<22} {'lines':>16} {'branches':>18}",
    ]
    for concept in sorted(by_concept):
        c = by_concept[concept]
        summary.append(f"{concept:<22} {percent(c[0], c[1]):>7} of {c[1]:>6} {percent(c[2], c[3]):>7} of {c[3]:>8}")
    text = "\n".join(summary) + "\n"
    if args.summary:
        with open(args.summary, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        sys.stderr.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
