#!/usr/bin/env python3
"""Checks that every command-line option of rung's CLI (cli/), of the example
applications (examples/) and of the benchmarks' tools (bench/) is declared through cli/numeric_args.h: add_number for a
number (finite, whole for an integer, within a stated range, the option named in
its error) or add_text for text, which refuses a numeric variable at compile
time. Those two helpers are the only callers of CLI11's add_option, so a number
cannot reach a command unchecked. Exit 0 when clean; 1 and one line per direct
add_option otherwise (file:line)."""
import pathlib
import re
import sys

from source_text import strip_comments

# The helpers' own header: the one place CLI11's add_option is called.
HELPERS = {pathlib.PurePosixPath("cli/numeric_args.h")}
# add_option, add_option_function<T>, add_options...: any way CLI11 takes a valued option.
# add_option_group declares a group of options, not a value.
DIRECT = re.compile(r"\badd_option(?!_group\b)\w*\s*(<[^;()]*>)?\s*\(")
SOURCES = (".cpp", ".cc", ".h", ".hpp")


def main():
    root = pathlib.Path(__file__).resolve().parent.parent
    problems = []
    for folder in ("cli", "examples", "bench"):
        for path in sorted((root / folder).rglob("*")):
            if path.suffix not in SOURCES or not path.is_file():
                continue
            rel = pathlib.PurePosixPath(path.relative_to(root).as_posix())
            if rel in HELPERS:
                continue
            code_text = strip_comments(path.read_text(encoding="utf-8"), keep_strings=True)
            for lineno, code in enumerate(code_text.splitlines(), 1):
                if DIRECT.search(code):
                    problems.append(f"{rel}:{lineno}: a direct add_option: declare it with add_number (a number, with its range) "
                                    f"or add_text (text) from cli/numeric_args.h")
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
