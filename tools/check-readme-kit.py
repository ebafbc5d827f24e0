#!/usr/bin/env python3
"""The README's four programs (C++, C, Rust, Python) build and run from an
installed kit exactly as the README prints them, with no environment variable
set: what an application author does after the main command.

The build tree is installed into a scratch prefix (the kit); the programs and
the shell block after them are taken from the README's section "The same program
in four languages"; the block runs under `env -i` (PATH alone, to find the
compilers) in a directory outside the clone. Only two of its lines are adapted:
`KIT=` names the scratch kit, and the model is copied from the deps cache this
build used. Each program must say it ran the classifier.

  tools/check-readme-kit.py --build BUILD --deps DEPS_DIR [--scratch DIR] [--cargo CARGO]

The scratch directory is a new one under the system's temporary directory unless
given: outside the clone, as an application's own directory is.
"""
import argparse
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
SECTION = "### The same program in four languages"
PROGRAMS = [("cpp", "app.cpp"), ("c", "app.c"), ("rust", "main.rs"), ("python", "app.py")]
# What each program prints when it ran the model (the rung is the CPU here: no accelerator, no cache).
EXPECTED = [
    ("C++", r"^ppocr_cls ran on \S+ as ppocr_cls$"),
    ("C", r"^ran on \S+ as ppocr_cls$"),
    ("Rust", r"^\[[-0-9.e, ]+\] on \S+, \{\"ppocr_cls\": \"ppocr_cls\"\}$"),
    ("Python (engine)", r"^\S+ \{'ppocr_cls': 'ppocr_cls'\}$"),
    ("Python (rung probe)", r"^cpu$"),
]


def section_blocks(text):
    start = text.index(SECTION)
    end = text.find("\n## ", start)
    body = text[start:end if end >= 0 else len(text)]
    return re.findall(r"^```(\w+)\n(.*?)^```", body, re.M | re.S)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--deps", required=True, help="the deps cache the build used (its models/)")
    ap.add_argument("--scratch")
    ap.add_argument("--cargo", default=shutil.which("cargo"))
    a = ap.parse_args()

    blocks = section_blocks((ROOT / "README.md").read_text(encoding="utf-8"))
    langs = [lang for lang, _ in blocks]
    want = [lang for lang, _ in PROGRAMS] + ["sh"]
    if langs != want:
        print(f"README's section '{SECTION}' holds blocks {langs}, expected {want}: the extraction no longer fits it")
        return 1

    scratch = pathlib.Path(a.scratch or tempfile.mkdtemp(prefix="rung-readme-kit-")).resolve()
    if ROOT in scratch.parents or scratch == ROOT:
        print(f"{scratch} is inside the clone: the programs must build where an application would, outside it")
        return 1
    shutil.rmtree(scratch, ignore_errors=True)
    kit, app = scratch / "kit", scratch / "app"
    app.mkdir(parents=True)
    r = subprocess.run(["cmake", "--install", a.build, "--prefix", str(kit)], capture_output=True, text=True)
    if r.returncode != 0:
        print(f"cmake --install failed:\n{r.stdout}{r.stderr}")
        return 1
    for (lang, name), (_, code) in zip(PROGRAMS, blocks):
        (app / name).write_text(code, encoding="utf-8")

    script = []
    for line in blocks[-1][1].splitlines():
        if line.startswith("KIT="):
            line = f"KIT={kit}"
        elif "~/.cache/rung/models/" in line:
            line = line.replace("~/.cache/rung/models/", f"{pathlib.Path(a.deps).resolve()}/models/")
        script.append(line)
    path = "/usr/local/bin:/usr/bin:/bin"
    if a.cargo:
        path = f"{pathlib.Path(a.cargo).parent}:{path}"
    r = subprocess.run(["env", "-i", f"PATH={path}", "bash", "-euo", "pipefail", "-c", "\n".join(script)],
                       cwd=app, capture_output=True, text=True, timeout=900)
    print(r.stdout)
    if r.returncode != 0:
        print(f"the README's commands failed (exit {r.returncode}) under env -i in {app}:\n{r.stderr}")
        return 1
    lines = r.stdout.splitlines()
    missing = [what for what, pattern in EXPECTED if not any(re.match(pattern, line) for line in lines)]
    if missing:
        print(f"these programs did not print what they print after running the model: {', '.join(missing)}\n{r.stderr}")
        return 1
    # The kit was used, not the build tree: the engine library the programs load is the kit's.
    r = subprocess.run(["env", "-i", "ldd", str(app / "app-cpp")], capture_output=True, text=True)
    loaded = dict(re.findall(r"^\s*(\S+) => (\S+)", r.stdout, re.M))
    for lib in ("librung_engine.so.1", "libfmt.so.9", "libprotobuf.so.32", "libonnx_proto.so.1"):
        if lib not in loaded or pathlib.Path(os.path.realpath(loaded[lib])).parent != kit / "lib":
            print(f"app-cpp does not load {lib} from the kit's lib/ ({kit / 'lib'}):\n{r.stdout}")
            return 1
    print(f"the README's C++, C, Rust and Python programs built and ran from the kit {kit} under env -i")
    shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
