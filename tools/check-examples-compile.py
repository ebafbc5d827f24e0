#!/usr/bin/env python3
"""Every C++ example an application author reads compiles and links as written,
against the stable headers alone: the README's and docs/'s ```cpp blocks, and
the usage example at the top of include/rung/engine.h (its "//   " lines).

The stable headers (STABLE below: rung.h, status.h, engine.h) are copied into a
scratch include directory by themselves, so a stable header that includes an
unstable one fails here too. Each example is compiled with -Wall -Wextra
-Werror (an ignored [[nodiscard]] fails) and linked against librung_engine.

  tools/check-examples-compile.py --cxx c++ --lib-dir BUILD [--scratch DIR]
"""
import argparse
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
STABLE = ["rung.h", "status.h", "engine.h"]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def fenced_cpp(path):
    text = path.read_text(encoding="utf-8")
    for m in re.finditer(r"^```cpp\n(.*?)^```", text, re.M | re.S):
        line = text.count("\n", 0, m.start()) + 1
        yield f"{path.relative_to(ROOT)}:{line}", m.group(1)


def header_usage(path):
    """The header's leading comment lines that start with '//   ' (the usage example)."""
    lines = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("//"):
            break
        if line.startswith("//   "):
            lines.append(line[5:])
    if lines:
        yield f"{path.relative_to(ROOT)} (usage)", "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cxx", required=True)
    ap.add_argument("--lib-dir", required=True, help="the directory holding librung_engine.so")
    ap.add_argument("--scratch")
    a = ap.parse_args()
    scratch = pathlib.Path(a.scratch or tempfile.mkdtemp(prefix="rung-examples-"))
    shutil.rmtree(scratch, ignore_errors=True)
    (scratch / "include" / "rung").mkdir(parents=True)
    for h in STABLE:
        shutil.copy(ROOT / "include" / "rung" / h, scratch / "include" / "rung" / h)
    examples = []
    for doc in DOCS:
        examples.extend(fenced_cpp(doc))
    examples.extend(header_usage(ROOT / "include" / "rung" / "engine.h"))
    if not examples:
        print("no C++ example found: the extraction is broken")
        return 1
    failed = 0
    for i, (where, code) in enumerate(examples):
        src = scratch / f"example{i}.cc"
        src.write_text(code, encoding="utf-8")
        cmd = [a.cxx, "-std=c++20", "-Wall", "-Wextra", "-Werror", "-I", str(scratch / "include"), str(src),
               "-L", a.lib_dir, "-lrung_engine", f"-Wl,-rpath,{a.lib_dir}", "-o", str(scratch / f"example{i}")]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            failed += 1
            print(f"{where}: does not compile as written:\n{r.stderr.strip()}\n")
        else:
            print(f"{where}: compiles and links")
    if failed:
        print(f"{failed} of {len(examples)} C++ examples do not compile as written")
        return 1
    print(f"all {len(examples)} C++ examples compile and link against the stable headers alone")
    shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
