#!/usr/bin/env python3
"""A new user's walk through the README: the block of section "Now your own
model" runs exactly as printed, on a copy of the sample classifier standing in
for the user's model, with no environment variable set but PATH and HOME.

The block names the model as $HOME/models/my_model.onnx and the CLI as
build/rung, as a user runs it from the clone; here HOME is a scratch directory
outside the clone holding the model, and the block runs there with build/
linking to this build tree, so nothing is adapted and nothing lands in the clone.
Every line must exit 0, and each command must have said what the README says it says.

  tools/check-readme-walk.py --build BUILD --model MODEL [--scratch DIR]
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
SECTION = "## Now your own model"


def walk_block(text):
    start = text.index(SECTION)
    end = text.find("\n## ", start + len(SECTION))
    blocks = re.findall(r"^```(\w+)\n(.*?)^```", text[start:end if end >= 0 else len(text)], re.M | re.S)
    if [lang for lang, _ in blocks] != ["sh"]:
        raise SystemExit(f"README's section '{SECTION}' should hold one sh block, not {[lang for lang, _ in blocks]}")
    return blocks[0][1]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--model", required=True, help="the model standing in for the user's")
    ap.add_argument("--scratch")
    a = ap.parse_args()

    block = walk_block((ROOT / "README.md").read_text(encoding="utf-8"))
    home = pathlib.Path(a.scratch or tempfile.mkdtemp(prefix="rung-readme-walk-"))
    if ROOT in home.resolve().parents:
        print(f"{home} is inside the clone: the walk must run outside it")
        return 1
    (home / "models").mkdir(parents=True, exist_ok=True)
    shutil.copyfile(a.model, home / "models" / "my_model.onnx")
    link = home / "build"
    if link.is_symlink() or link.exists():
        link.unlink()
    link.symlink_to(pathlib.Path(a.build).resolve())
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home)}
    print(block)
    run = subprocess.run(["/bin/sh", "-e", "-x", "-c", block], cwd=home, env=env, capture_output=True, text=True, timeout=1200)
    print(run.stdout)
    print(run.stderr, file=sys.stderr)
    if run.returncode != 0:
        print(f"the walk stopped with exit {run.returncode}: a line of the README's block failed as printed")
        return 1
    out = run.stdout
    checks = [
        ("probe's answer", r"^\S.* · ONNX Runtime 1\.30\.0"),
        ("probe's floor row", r"CPU \(floor\)\s+mine"),
        ("bench's report", r"report: bench\.html"),
        ("parity's reference side", r"^ref\s+my_model\.onnx · CPU · ONNX Runtime 1\.30\.0"),
        ("parity's candidate side", r"^cand\s+my_model\.onnx · CPU · ONNX Runtime 1\.28\.2"),
        ("parity's verdict", r"^the gate passed$"),
    ]
    missing = [what for what, pattern in checks if not re.search(pattern, out + run.stderr, re.M)]
    if missing:
        print("the walk ran but did not say: " + ", ".join(missing))
        return 1
    if not (home / "bench.html").is_file():
        print("bench wrote no bench.html where the README says")
        return 1
    if not a.scratch:
        shutil.rmtree(home, ignore_errors=True)
    print("the README's walk ran as printed: probe, bench and parity on the user's model")
    return 0


if __name__ == "__main__":
    sys.exit(main())
