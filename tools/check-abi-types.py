#!/usr/bin/env python3
"""Checks the C ABI's types against a committed baseline with libabigail's
abidiff: a function that gains or loses a parameter or changes a type, an enum
value renumbered or removed, a struct member moved, retyped or inserted before
the end, a function removed: each fails. Additions pass (a function, an enum
value, a member at the end of a struct that starts with struct_size), and the
baseline can then be refreshed with --update.

The ABI is read from the header alone: every RUNG_API function in
include/rung/rung.h gets an empty definition in a small C library built with
full debug information, and abidw describes it (the engine's own library is
built with -g1, which has no types). So the baseline, src/capi/abi-baseline.xml,
depends on the header and nothing else.

  check-abi-types.py [--cc CC] [--library LIBRARY]   check; LIBRARY (the built
                      librung_engine.so) must also export every header function
  check-abi-types.py --update [--force]              rewrite the baseline (an
                      incompatible change only with --force: a new soname)
  check-abi-types.py --self-test                     plant each kind of change in
                      a copy of the header: the check must judge each right
Exit 0 when it holds, 1 otherwise."""
import argparse
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

ROOT = pathlib.Path(__file__).resolve().parent.parent
HEADER = ROOT / "include/rung/rung.h"
BASELINE = ROOT / "src/capi/abi-baseline.xml"
# Every type, reachable or not (the anonymous RUNG_INPUTS enum is used by no
# signature); no paths, architecture or corpus name, so the XML is the same on
# any machine. Locations are kept only to tell rung.h's types from the system's,
# then dropped.
ABIDW_FLAGS = ["--load-all-types", "--no-corpus-path", "--no-comp-dir-path", "--no-architecture", "--no-elf-needed",
               "--short-locs", "--type-id-style", "hash"]
ABIDIFF_FLAGS = ["--non-reachable-types", "--no-default-suppression"]
ABIDIFF_ERROR, ABIDIFF_USAGE_ERROR, ABIDIFF_ABI_CHANGE, ABIDIFF_ABI_INCOMPATIBLE_CHANGE = 1, 2, 4, 8
INSTALL_HINT = "tools/bootstrap.sh --tests installs abigail-tools (apt-get install abigail-tools)"


class Verdict:
    def __init__(self, kind, lines):
        self.kind = kind  # "same", "compatible", "incompatible" or "error"
        self.lines = lines


def strip_comments(text):
    return re.sub(r"//[^\n]*", "", re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S))


def prototypes(code):
    """(return type, name, parameters) of each RUNG_API declaration, or a ValueError
    when a RUNG_API line does not read as one (so none is skipped silently)."""
    found = [(" ".join(m.group(1).split()), m.group(2), " ".join(m.group(3).split()))
             for m in re.finditer(r"\bRUNG_API\b([^;{}#]*?)\b(rung_\w+)\s*\(([^;{}#]*?)\)\s*;", code)]
    no_directives = re.sub(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", "", code, flags=re.M)
    uses = len(re.findall(r"\bRUNG_API\b", no_directives))
    if uses != len(found):
        raise ValueError(f"{uses} RUNG_API declarations but {len(found)} read as prototypes: "
                         "tools/check-abi-types.py reads one 'RUNG_API type name(parameters);' each")
    return found


def versioned_structs(baseline):
    """{struct name: its members in the baseline} for each struct whose first member is struct_size."""
    structs = {}
    for decl in ET.parse(baseline).getroot().iter("class-decl"):
        members = [v.get("name") for d in decl.findall("data-member") for v in d.findall("var-decl")]
        if decl.get("name") and members[:1] == ["struct_size"]:
            structs[decl.get("name")] = members
    return structs


def cut_grown_structs(code, versioned):
    """A struct that starts with struct_size may grow at its end: compare only the
    members the baseline knows. Returns the code so cut and what was cut."""
    grown = []

    def cut(m):
        known = versioned.get(m.group(1))
        members = [s.strip() for s in m.group(2).split(";") if s.strip()]
        if known is None or len(members) <= len(known):
            return m.group(0)
        grown.append(f"struct {m.group(1)} grew at its end: "
                     + ", ".join(re.findall(r"\w+", s)[-1] for s in members[len(known):]))
        return f"struct {m.group(1)} {{ " + " ".join(s + ";" for s in members[:len(known)]) + " }"

    return re.sub(r"\bstruct\s+(\w+)\s*\{([^{}]*)\}", cut, code), grown


def model_library(header_text, work, cc):
    """Builds the header's functions as empty stubs into work/librung_engine.so.1."""
    code = strip_comments(header_text)
    (work / "include/rung").mkdir(parents=True, exist_ok=True)
    (work / "include/rung/rung.h").write_text(code)
    stubs = ['#include "rung/rung.h"']
    for ret, name, params in prototypes(code):
        body = "{ }" if ret == "void" else f"{{ {ret} r = {{0}}; return r; }}"
        stubs.append(f"RUNG_API {ret} {name}({params}) {body}")
    (work / "model.c").write_text("\n".join(stubs) + "\n")
    # Hidden by default, so the library exports exactly the RUNG_API functions.
    subprocess.run([cc, "-std=c99", "-shared", "-fPIC", "-g", "-O0", "-fvisibility=hidden",
                    "-fno-eliminate-unused-debug-types", "-I", "include", "-Wl,-soname,librung_engine.so.1",
                    "-o", "librung_engine.so.1", "model.c"], cwd=work, check=True, capture_output=True, text=True)
    return work / "librung_engine.so.1"


def describe(library, out):
    """abidw's XML of the library, cut to the functions, rung.h's types and what they
    use: the system headers' other typedefs differ from one C library to another."""
    subprocess.run(["abidw", *ABIDW_FLAGS, "--out-file", str(out), str(library)], check=True,
                   capture_output=True, text=True)
    tree = ET.parse(out)
    for instr in tree.getroot().iter("abi-instr"):
        children = list(instr)
        by_id = {c.get("id"): c for c in children if c.get("id")}
        keep = [c for c in children if c.tag in ("function-decl", "var-decl") or c.get("filepath") == "rung.h"]
        kept = set(map(id, keep))
        while keep:
            for ref in (v for e in keep.pop().iter() for k, v in e.attrib.items() if k != "id"):
                if ref in by_id and id(by_id[ref]) not in kept:
                    kept.add(id(by_id[ref]))
                    keep.append(by_id[ref])
        for c in children:
            if id(c) not in kept:
                instr.remove(c)
    for e in tree.getroot().iter():
        for attribute in ("filepath", "line", "column"):
            e.attrib.pop(attribute, None)
    ET.indent(tree, "  ")
    tree.write(out, encoding="unicode")
    with open(out, "a") as f:
        f.write("\n")
    return out


def check(header_text, baseline, cc):
    if not baseline.exists():
        return Verdict("error", [f"{baseline} is missing: tools/check-abi-types.py --update writes it"])
    with tempfile.TemporaryDirectory(prefix="rung-abi-") as tmp:
        work = pathlib.Path(tmp)
        try:
            code, grown = cut_grown_structs(strip_comments(header_text), versioned_structs(baseline))
            current = describe(model_library(code, work, cc), work / "current.xml")
        except ValueError as e:
            return Verdict("error", [str(e)])
        except subprocess.CalledProcessError as e:
            return Verdict("error", [f"{' '.join(map(str, e.cmd))} failed:", e.stderr.strip()])
        except OSError as e:
            return Verdict("error", [str(e)])
        diff = subprocess.run(["abidiff", *ABIDIFF_FLAGS, str(baseline), str(current)], capture_output=True,
                              text=True)
    report = [line for line in (diff.stdout + diff.stderr).rstrip().splitlines()]
    if diff.returncode & (ABIDIFF_ERROR | ABIDIFF_USAGE_ERROR):
        return Verdict("error", [f"abidiff failed (exit {diff.returncode}):", *report])
    # abidiff flags only removals as incompatible; a changed signature or type is
    # an "ABI change" to it, and to rung's rule as much a break as a removal.
    broken = [line for line in report
              if re.search(r"summary:", line, re.I) and re.search(r"\b[1-9]\d* (removed|changed)\b", line, re.I)]
    if diff.returncode & ABIDIFF_ABI_INCOMPATIBLE_CHANGE or broken:
        return Verdict("incompatible", report)
    if diff.returncode & ABIDIFF_ABI_CHANGE:
        if not any(re.search(r"summary:", line, re.I) for line in report):
            return Verdict("error", ["abidiff reported a change in words this script does not read:", *report])
        return Verdict("compatible", grown + report)
    return Verdict("compatible" if grown else "same", grown)


def check_exports(library, header_text):
    names = [name for _, name, _ in prototypes(strip_comments(header_text))]
    if not os.path.isfile(library):
        return [f"{library} is not there: build it first"]
    out = subprocess.run(["nm", "-D", "--defined-only", library], capture_output=True, text=True, check=True).stdout
    exported = {line.split()[-1] for line in out.splitlines() if line.strip()}
    return [f"{library} does not export {name}, declared in include/rung/rung.h" for name in names
            if name not in exported]


def tools_missing():
    missing = [t for t in ("abidw", "abidiff") if shutil.which(t) is None]
    if missing:
        print(f"{' and '.join(missing)} not found: {INSTALL_HINT}")
    return bool(missing)


def replace_once(pattern, replacement, flags=0):
    """A planted change: it must change the header exactly once, or the case proves nothing."""
    def plant(text):
        planted, n = re.subn(pattern, replacement, text, flags=flags)
        if n != 1 or planted == text:
            raise AssertionError(f"planting {pattern!r} matched {n} times")
        return planted
    return plant


def both(*plants):
    def plant(text):
        for p in plants:
            text = p(text)
        return text
    return plant


IN_PROGRESS = r"(?=[^}]*\}\s*rung_progress;)"  # inside struct rung_progress
PLANTED = [
    ("a", "a function gains a parameter", False,
     replace_once(r"(\brung_engine_probe_done\s*\([^)]*)\)", r"\1, int32_t planted)")),
    ("b", "a function's return type changes", False,
     replace_once(r"\bRUNG_API\s+void\s+rung_job_free\s*\(", "RUNG_API int32_t rung_job_free(")),
    ("c", "an enum value is renumbered (RUNG_NOT_FOUND = 2 -> 9)", False,
     replace_once(r"\bRUNG_NOT_FOUND\s*=\s*2\b", "RUNG_NOT_FOUND = 9")),
    ("d", "two struct members are swapped (rung_progress total and landed)", False,
     replace_once(r"(\n[ \t]*size_t total;[^\n]*)(\n[ \t]*size_t landed;[^\n]*)" + IN_PROGRESS, r"\2\1")),
    ("e", "a struct member's type changes (rung_progress size_t total -> int32_t)", False,
     replace_once(r"\bsize_t total;" + IN_PROGRESS, "int32_t total;")),
    ("f", "a function is removed (rung_engine_chosen_reason)", False,
     replace_once(r"\bRUNG_API\s+char\*\s*rung_engine_chosen_reason\s*\([^)]*\)\s*;", "")),
    ("g", "compatible: a function added, an enum value added before the _MAX_ sentinel", True,
     both(replace_once(r"(\n[ \t]*)(RUNG_ERROR_CODE_MAX_\s*=)", r"\1RUNG_PLANTED_CODE = 1000,\1\2"),
          replace_once(r"(\n#ifdef __cplusplus\n\} /\* extern \"C\" \*/)",
                       r"\nRUNG_API void rung_planted_addition(void);\n\1"))),
    ("h", "compatible: a member appended to a struct that starts with struct_size (rung_progress)", True,
     replace_once(r"(\n[ \t]*int32_t done;[^\n]*)" + IN_PROGRESS, r"\1\n  int32_t planted_tail;")),
    ("i", "a member inserted mid-struct (rung_io_info, before rank)", False,
     replace_once(r"(\n[ \t]*)(size_t rank;)(?=[^}]*\}\s*rung_io_info;)", r"\1int32_t planted;\1\2")),
    ("j", "a value of the enum no signature uses is renumbered (RUNG_OUTPUTS = 1 -> 2)", False,
     replace_once(r"\bRUNG_OUTPUTS\s*=\s*1\b", "RUNG_OUTPUTS = 2")),
    ("k", "a parameter's type changes (timeout_ms int64_t -> int32_t)", False,
     replace_once(r"\bint64_t timeout_ms\b", "int32_t timeout_ms")),
]


def self_test(header_path, baseline, cc):
    header = header_path.read_text()
    cases = [("-", "the header as it is", True, lambda text: text)] + PLANTED
    wrong = 0
    for key, what, compatible, plant in cases:
        try:
            verdict = check(plant(header), baseline, cc)
        except AssertionError as e:
            verdict = Verdict("error", [str(e)])
        expected = "compatible" if compatible else "incompatible"
        right = verdict.kind == expected or (compatible and verdict.kind == "same")
        wrong += not right
        # The change named, and abidiff's last (most specific) words on it.
        named = [line.strip() for line in verdict.lines if re.match(r"\s*\[[CDA]\]|struct \w+ grew", line)]
        last = verdict.lines[-1].strip() if verdict.lines else ""
        evidence = " ... ".join(dict.fromkeys(named[:1] + [last] if named else [last]))
        print(f"{'ok   ' if right else 'WRONG'} ({key}) {what}: judged {verdict.kind}, expected {expected}"
              + (f": {evidence}" if evidence else ""))
        if not right:
            print("\n".join("      " + line for line in verdict.lines))
    if wrong:
        print(f"abidiff self-test: {wrong} of {len(cases)} planted changes judged WRONG")
        return 1
    print(f"abidiff self-test: all {len(cases)} planted changes judged right")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cc", default=os.environ.get("CC", "cc"), help="the C compiler for the header's model library")
    parser.add_argument("--library", help="the built librung_engine.so: it must export every header function")
    parser.add_argument("--baseline", type=pathlib.Path, default=BASELINE, help=argparse.SUPPRESS)
    parser.add_argument("--header", type=pathlib.Path, default=HEADER, help=argparse.SUPPRESS)
    parser.add_argument("--update", action="store_true", help="rewrite the baseline from the header")
    parser.add_argument("--force", action="store_true", help="with --update: even over an incompatible change")
    parser.add_argument("--self-test", action="store_true")
    args = parser.parse_args()
    if tools_missing():
        return 1
    if args.self_test:
        return self_test(args.header, args.baseline, args.cc)
    header = args.header.read_text()
    relative = os.path.relpath(args.baseline, ROOT)
    verdict = check(header, args.baseline, args.cc)
    if args.update:
        if verdict.kind == "incompatible" and not args.force:
            print("\n".join(verdict.lines))
            print(f"not updating {relative}: the change above breaks the ABI (a new soname, docs/abi.md); "
                  "--force writes it anyway")
            return 1
        with tempfile.TemporaryDirectory(prefix="rung-abi-") as tmp:
            work = pathlib.Path(tmp)
            try:
                shutil.copyfile(describe(model_library(header, work, args.cc), work / "new.xml"), args.baseline)
            except subprocess.CalledProcessError as e:
                print(f"{' '.join(map(str, e.cmd))} failed:\n{e.stderr.strip()}")
                return 1
            except (ValueError, OSError) as e:
                print(e)
                return 1
        print(f"wrote {relative}")
        return 0
    for line in verdict.lines:
        print(line)
    if verdict.kind == "error":
        print(f"abidiff: the C ABI could not be compared with {relative}")
        return 1
    if verdict.kind == "incompatible":
        print(f"abidiff: include/rung/rung.h is INCOMPATIBLE with {relative}: a published function, type or "
              "value changed or went away (docs/abi.md)")
        return 1
    problems = check_exports(args.library, header) if args.library else []
    for line in problems:
        print(line)
    if problems:
        print(f"abidiff: {args.library} does not export the C ABI of include/rung/rung.h")
        return 1
    n = len(prototypes(strip_comments(header)))
    if verdict.kind == "compatible":
        print("only additions: refresh the baseline with tools/check-abi-types.py --update")
    print(f"abidiff: the C ABI of include/rung/rung.h ({n} functions) holds against {relative}"
          + (", all exported by the library" if args.library else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
