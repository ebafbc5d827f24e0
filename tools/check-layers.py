#!/usr/bin/env python3
"""The layer rule is the build's: src/CMakeLists.txt names the layers
(RUNG_LAYERS) and compiles each concept against a view of src/ and
of rung's headers that holds only itself and the layers below it, so a backward
include does not compile. This script checks what surrounds that:

  check-layers.py docs --order BUILD/layers/order.txt
      docs/code-map.md's table lists every concept once, in the build's order,
      with the build's layer number; and no include under src/ climbs out of
      its folder with "..", which the compiler resolves through the real tree
      rather than the view.

  check-layers.py planted --compile-commands BUILD/compile_commands.json --fixtures DIR
      each planted file in DIR says the concept whose view it is compiled
      against ("// view: session") and what must happen ("// expect: fails",
      "compiles", or "refused by the source check"); it is compiled with that
      concept's own command from the build, and every expectation must hold.

  check-layers.py same-build --compile-commands A.json --compile-commands B.json ...
      two or more builds (Linux's, Windows', aarch64's) are one description: every
      concept each builds is compiled with the same warning flags, against its own
      layer view, and a concept one build has and another lacks is named.

Exit 0 when everything holds; 1 with one line per problem otherwise.
"""
import argparse
import json
import pathlib
import re
import shlex
import subprocess
import sys
import tempfile

from compile_commands import command_without_outputs

ROOT = pathlib.Path(__file__).resolve().parent.parent
CLIMBING_INCLUDE = re.compile(r'^\s*#\s*include\s*[<"](?P<path>[^>"]*\.\./[^>"]*)[>"]', re.M)
SOURCE_SUFFIXES = {".c", ".cc", ".cpp", ".h", ".hpp", ".inl", ".ipp"}


def read_order(path):
    order = {}
    for line in pathlib.Path(path).read_text().splitlines():
        if line.strip():
            concept, rank = line.split()
            order[concept] = int(rank)
    return order


def climbing_includes(path, text, shown):
    return [f"{shown}:{text.count(chr(10), 0, m.start()) + 1}: includes \"{m.group('path')}\": a relative include out of its "
            f"folder escapes the layer views; name the header from src/ (\"concept/file.h\")"
            for m in CLIMBING_INCLUDE.finditer(text)]


def check_docs(order_file):
    order = read_order(order_file)
    problems = []
    rows = []
    for lineno, line in enumerate((ROOT / "docs" / "code-map.md").read_text().splitlines(), 1):
        m = re.match(r"^\| `src/([a-z_]+)/` \|.*\| (\d+) \|\s*$", line)
        if m:
            rows.append((lineno, m.group(1), int(m.group(2))))
    seen = [name for _, name, _ in rows]
    for concept in order:
        if seen.count(concept) != 1:
            problems.append(f"docs/code-map.md: src/{concept}/ is listed {seen.count(concept)} times; once, with its layer")
    last = -1
    for lineno, name, rank in rows:
        if name not in order:
            problems.append(f"docs/code-map.md:{lineno}: src/{name}/ is in no layer of RUNG_LAYERS")
            continue
        if rank != order[name]:
            problems.append(f"docs/code-map.md:{lineno}: src/{name}/ is in layer {order[name]} of the build, not {rank}")
        if order[name] < last:
            problems.append(f"docs/code-map.md:{lineno}: src/{name}/ (layer {order[name]}) comes after a row of layer {last}")
        last = max(last, order[name])
    for path in sorted((ROOT / "src").rglob("*")):
        if path.suffix in SOURCE_SUFFIXES and path.is_file():
            problems += climbing_includes(path, path.read_text(encoding="utf-8", errors="replace"), path.relative_to(ROOT))
    return problems


def concept_command(entries, concept):
    """The compiler and flags the build uses for `concept`'s objects, without a source or an output."""
    for e in entries:
        if f"/rung_{concept}_objects.dir/" in e.get("command", " ".join(e.get("arguments", []))):
            return [a for a in command_without_outputs(e) if a != e["file"]], e["directory"]
    return None, None


def check_planted(compile_commands, fixtures):
    entries = json.loads(pathlib.Path(compile_commands).read_text())
    problems, ran = [], 0
    for planted in sorted(pathlib.Path(fixtures).glob("*.cc")):
        text = planted.read_text()
        view = re.search(r"^// view: (\w+)$", text, re.M)
        expect = re.search(r"^// expect: (.+)$", text, re.M)
        if not view or not expect:
            problems.append(f"{planted.name}: names no view or no expectation")
            continue
        ran += 1
        if expect.group(1) == "refused by the source check":
            if climbing_includes(planted, text, planted.name):
                print(f"PASS  {planted.name}: refused by the source check")
            else:
                problems.append(f"{planted.name}: the source check let it through")
            continue
        command, directory = concept_command(entries, view.group(1))
        if command is None:
            problems.append(f"{planted.name}: the build compiles no rung_{view.group(1)}_objects")
            continue
        with tempfile.TemporaryDirectory() as tmp:
            # Compiled from a directory of its own, so "the directory of the file" holds nothing else.
            copy = pathlib.Path(tmp) / planted.name
            copy.write_text(text)
            r = subprocess.run(command + ["-fsyntax-only", str(copy)], cwd=directory, capture_output=True, text=True)
        # Refused for the header it plants, not for anything else.
        planted_header = re.findall(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', text, re.M)[-1]
        missing = planted_header in r.stderr and ("No such file or directory" in r.stderr or "file not found" in r.stderr)
        if expect.group(1) == "fails" and not (r.returncode != 0 and missing):
            problems.append(f"{planted.name}: compiled against the {view.group(1)} view, which must not see it "
                            f"(exit {r.returncode}) {r.stderr.strip()[:300]}")
        elif expect.group(1) == "compiles" and r.returncode != 0:
            problems.append(f"{planted.name}: the {view.group(1)} view must see all of it: {r.stderr.strip()[:600]}")
        else:
            print(f"PASS  {planted.name}: {expect.group(1)} against the {view.group(1)} view")
    if ran == 0:
        problems.append(f"{fixtures}: no planted file")
    return problems


# The targets whose sources are rung's own code in every build (tests/ and fuzz/ apart).
PRODUCT_TARGET = re.compile(r"[/ ](rung_[a-z_]+_objects|rung_cli_shared|rung_cli|rung_full|rung_probe_worker|rung_sim_ep)\.dir/")


def expanded(args, directory):
    """`args` with each @response-file (mingw's builds put include flags in one) read in."""
    out = []
    for a in args:
        if a.startswith("@"):
            out += shlex.split((pathlib.Path(directory) / a[1:]).read_text())
        else:
            out.append(a)
    return out


def build_facts(compile_commands):
    """target -> {(its warning flags, the layer views it compiles against)}, for each product target."""
    facts = {}
    for e in json.loads(pathlib.Path(compile_commands).read_text()):
        m = PRODUCT_TARGET.search(e.get("command", " ".join(e.get("arguments", []))))
        if not m:
            continue
        args = expanded(command_without_outputs(e), e["directory"])
        warnings = frozenset(a for a in args if a.startswith("-W") and not a.startswith(("-Wl,", "-Wa,", "-Wp,")))
        views = frozenset(re.sub(r".*/layers/", "", a) for a in args if "/layers/" in a and a.startswith("-I"))
        facts.setdefault(m.group(1), set()).add((warnings, views))
    return facts


def check_same_build(files):
    builds = {f: build_facts(f) for f in files}
    problems = []
    first = files[0]
    for f, facts in builds.items():
        if not facts:
            problems.append(f"{f}: compiles none of rung's own targets")
        for target, seen in facts.items():
            if len(seen) != 1:
                problems.append(f"{f}: {target}'s sources are compiled with different flags from each other")
    for f in files[1:]:
        for target in sorted(set(builds[first]) & set(builds[f])):
            w1, v1 = next(iter(builds[first][target]))
            w2, v2 = next(iter(builds[f][target]))
            if w1 != w2:
                problems.append(f"{target}: warnings differ: only in {first}: {' '.join(sorted(w1 - w2)) or '-'}; "
                                f"only in {f}: {' '.join(sorted(w2 - w1)) or '-'}")
            if v1 != v2:
                problems.append(f"{target}: layer views differ: {sorted(v1)} in {first}, {sorted(v2)} in {f}")
        shared = set(builds[first]) & set(builds[f])
        print(f"PASS  {len(shared)} targets built by both {first} and {f} compared" if not problems else
              f"compared {len(shared)} targets of {first} and {f}")
        for target in sorted(set(builds[f]) - set(builds[first])):
            problems.append(f"{f} builds {target}, which {first} does not: one description builds every target it can everywhere")
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="mode", required=True)
    docs = sub.add_parser("docs")
    docs.add_argument("--order", required=True)
    planted = sub.add_parser("planted")
    planted.add_argument("--compile-commands", required=True)
    planted.add_argument("--fixtures", required=True)
    same = sub.add_parser("same-build")
    same.add_argument("--compile-commands", action="append", required=True)
    a = parser.parse_args()
    if a.mode == "docs":
        problems = check_docs(a.order)
    elif a.mode == "planted":
        problems = check_planted(a.compile_commands, a.fixtures)
    else:
        if len(a.compile_commands) < 2:
            parser.error("same-build compares two builds or more")
        problems = check_same_build(a.compile_commands)
    for p in problems:
        print(f"FAIL  {p}")
    print(f"{len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
