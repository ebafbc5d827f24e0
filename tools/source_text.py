"""Source text for rung's CI checks (tools/check-*.py): C++ with its comments
blanked, and its string literals too when a check must not see them, line
numbers kept. One stripper, so every check reads code the same way."""
import argparse
import bisect
import pathlib
import re
import sys


def strip_comments(text, keep_strings=False):
    """The text with comments blanked, and string and character literals too
    unless keep_strings (newlines kept, so line numbers still count)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "R" and i + 1 < n and text[i + 1] == '"' and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'R"([^()\\ \n]{0,16})\(', text[i:])
            if not m:
                out.append(c)
                i += 1
                continue
            end = text.find(")" + m.group(1) + '"', i + m.end())
            end = n if end < 0 else end + len(m.group(1)) + 2
            out.append(text[i:end] if keep_strings else '""' + re.sub(r"[^\n]", " ", text[i + 2:end]))
            i = end
        elif c in "\"'":
            # A quote after a digit is C++14's digit separator (1'000), not a literal.
            if c == "'" and i > 0 and text[i - 1].isalnum():
                out.append(c)
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(text[i:j] if keep_strings else c + " " * max(0, j - i - 2) + (c if j - i >= 2 else ""))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def line_finder(code):
    """pos -> its 1-based line number in `code`."""
    starts = [0] + [m.end() for m in re.finditer("\n", code)]
    return lambda pos: bisect.bisect_right(starts, pos)


# Every suffix a C or C++ file is written under, the included-inline ones too (.inl, .ipp, .tcc).
SOURCE_SUFFIXES = {".c", ".cc", ".cpp", ".cxx", ".c++", ".cppm", ".ixx", ".h", ".hh", ".hpp", ".hxx", ".h++", ".inl", ".ipp",
                   ".tcc", ".tpp", ".inc"}


def source_files(root, folders, exempt_prefixes):
    """(relative posix path, text) of every C/C++ file under `folders` of `root`,
    sorted, but those under an exempt prefix."""
    for folder in folders:
        for path in sorted((root / folder).rglob("*")):
            if path.suffix not in SOURCE_SUFFIXES or not path.is_file():
                continue
            rel = path.relative_to(root).as_posix()
            if any(rel.startswith(p) for p in exempt_prefixes):
                continue
            yield rel, path.read_text(encoding="utf-8", errors="replace")


def run_source_check(doc, findings_in, folders, exempt_prefixes, summary):
    """A check's command line: --root DIR (default: this repository); prints each
    finding of findings_in(rel, text) and exits 1 with `summary` (formatted with the
    count) when there are any."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", type=pathlib.Path, default=pathlib.Path(__file__).resolve().parent.parent,
                        help="the source tree to check (default: this repository)")
    root = parser.parse_args().root.resolve()
    problems = [p for rel, text in source_files(root, folders, exempt_prefixes) for p in findings_in(rel, text)]
    for p in problems:
        print(p)
    if problems:
        print(summary.format(len(problems)), file=sys.stderr)
        return 1
    return 0
