#!/usr/bin/env python3
"""A rung is one module: nothing outside src/rungs/ branches on which rung it has.

Every in-tree rung's facts live in its module (src/rungs/<rung>.cpp, one
`RungModule`); code elsewhere asks the module (module_of(rung)->quirks, ...)
or the ladder (is_cpu_floor), never compares a rung's name, display name or
provider with a literal. This reads the ids, display names and provider names
the modules declare, then finds, in src/, cli/ and worker/ outside src/rungs/:

  - a rung's field compared with any of them: `rung.name == "directml"`,
    `r.provider != "CUDAExecutionProvider"`, `spec.display == "CPU"`;
  - any comparison with an accelerator's id or provider (`rung == "qnn-htp"`):
    the CPU floor's id alone may be compared as a record's text ("cpu").

  check-rung-branches.py                 the tree; exit 1 with one line per branch found
  check-rung-branches.py --planted DIR   each DIR/*.cc says "// expect: N" branches; all must hold
"""
import argparse
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
SPEC = re.compile(r'm\.spec\s*=\s*\{\s*"([^"]+)",\s*"([^"]+)",\s*"([^"]+)"')


def module_names():
    ids, words = set(), set()
    for f in sorted((ROOT / "src" / "rungs").glob("*.cpp")):
        for rung_id, display, provider in SPEC.findall(f.read_text()):
            ids.add(rung_id)
            words.update({rung_id, display, provider})
    return ids, words


def branches(text, ids, words):
    found = []
    accelerators = {w for w in words if w not in ("cpu", "CPU", "CPUExecutionProvider")}
    for n, line in enumerate(text.splitlines(), 1):
        code = line.split("//", 1)[0]
        for m in re.finditer(r'(\.(?:name|display|provider)\b(?:\(\))?)\s*(==|!=)\s*"([^"]*)"', code):
            if m.group(3) in words:
                found.append((n, m.group(0)))
        for m in re.finditer(r'(==|!=)\s*"([^"]*)"|"([^"]*)"\s*(==|!=)', code):
            lit = m.group(2) or m.group(3)
            if lit in accelerators and not any(f[0] == n for f in found):
                found.append((n, m.group(0)))
    return found


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--planted")
    args = ap.parse_args()
    ids, words = module_names()
    if len(ids) < 2:
        print("check-rung-branches: found no rung modules in src/rungs/")
        return 1
    problems = []
    if args.planted:
        planted = sorted(pathlib.Path(args.planted).glob("rung-branch*.cc"))
        if not planted:
            problems.append(f"{args.planted}: no rung-branch*.cc planted")
        for f in planted:
            text = f.read_text()
            want = int(re.search(r"// expect: (\d+)", text).group(1))
            got = branches(text, ids, words)
            if len(got) != want:
                problems.append(f"{f.name}: {len(got)} branches found, {want} planted: {got}")
    else:
        for top in ("src", "cli", "worker"):
            for f in sorted((ROOT / top).rglob("*")):
                if f.suffix not in (".cpp", ".h", ".cc") or (ROOT / "src" / "rungs") in f.parents:
                    continue
                for n, what in branches(f.read_text(errors="replace"), ids, words):
                    problems.append(f"{f.relative_to(ROOT)}:{n}: `{what}`: a branch on which rung this is; "
                                    "say it in the rung's module (src/rungs/) and ask the module")
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
