#!/usr/bin/env python3
"""Mutation testing of rung's decision logic, on demand (never in CI).

Each mutant in tools/mutants.txt is one small, realistic bug: a file, a snippet
that must occur there exactly once, and its replacement. One at a time, the
mutant is put into a scratch copy of the work tree (never the tree itself),
the scratch build is rebuilt incrementally (ccache) and the tests run: a
failing test kills the mutant; passing tests mean it survived. A snippet that
no longer occurs exactly once is "stale" (the code moved), a mutant that does
not compile is "build-failed"; neither counts. Mutants marked equivalent (no
test can tell them apart from the original) are run but left out of the score.

  tools/mutate.py --list                   every mutant and whether its snippet is current
  tools/mutate.py                          every mutant against the whole ctest suite
  tools/mutate.py --concept                each mutant against its concept's test executables
  tools/mutate.py --tests REGEX            each mutant against ctest -R REGEX
  tools/mutate.py --only ID[,ID...]        just these mutants
  tools/mutate.py --from-diff BASE         mutants made by rule from the lines added since BASE
                                           (tools/diff_mutants.py), each against the tests the
                                           build's records say can see its file (tools/test_selection.py)

The scratch copy lives in --scratch (default: build-mutate/ in the tree, so
ccache shares objects with the tree's own build/). It is synchronised from the
work tree (tracked and untracked, not ignored, files) before each run.
"""

import argparse
import datetime
import fcntl
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import random
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from diff_mutants import mutants_from_diff  # noqa: E402
from test_selection import TestMap  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_LIST = Path(__file__).resolve().parent / "mutants.txt"


@dataclass
class Mutant:
    id: str
    file: str
    what: str
    tests: list
    original: str
    replacement: str
    equivalent: str = ""
    line: int = 0  # where it starts in the list, for messages

    def occurrences(self, tree: Path) -> int:
        try:
            return (tree / self.file).read_text().count(self.original)
        except OSError:
            return 0


@dataclass
class Result:
    mutant: Mutant
    status: str  # killed, survived, stale, build-failed, equivalent
    seconds: float = 0.0
    detail: str = ""


# ---------------------------------------------------------------- the list


def parse_mutants(path: Path) -> list:
    """The list: blocks separated by blank lines, each

        == ID
        file   src/core/tolerance.cpp
        tests  tolerance-test probe-test:FingerprintTest.*   (test executables, each optionally EXE:GTEST_FILTER)
        what   one line saying what bug this is
        equivalent  why no test can tell (optional)
        - original line (after "- ", verbatim; several lines for a multi-line snippet)
        + replacement line (the same; no "+" line means the snippet is deleted)
    """
    mutants, block, start = [], [], 0
    lines = path.read_text().splitlines()
    for number, line in enumerate(lines + [""], start=1):
        if line.startswith("#"):
            continue
        if line.strip() == "":
            if block:
                mutants.append(parse_block(block, start, path))
                block = []
            continue
        if not block:
            start = number
        block.append(line)
    ids = [m.id for m in mutants]
    duplicates = {i for i in ids if ids.count(i) > 1}
    if duplicates:
        sys.exit(f"{path}: duplicate mutant ids: {', '.join(sorted(duplicates))}")
    return mutants


def parse_block(block: list, start: int, path: Path) -> Mutant:
    fields, original, replacement = {}, [], []
    for line in block:
        if line.startswith("== "):
            fields["id"] = line[3:].strip()
        elif line.startswith("- ") or line == "-":
            original.append(line[2:])
        elif line.startswith("+ ") or line == "+":
            replacement.append(line[2:])
        else:
            key, _, value = line.partition(" ")
            fields[key] = value.strip()
    missing = [k for k in ("id", "file", "what", "tests") if k not in fields] + ([] if original else ["- lines"])
    if missing:
        sys.exit(f"{path}:{start}: mutant lacks {', '.join(missing)}")
    return Mutant(id=fields["id"], file=fields["file"], what=fields["what"], tests=fields["tests"].split(),
                  original="\n".join(original), replacement="\n".join(replacement),
                  equivalent=fields.get("equivalent", ""), line=start)


# ---------------------------------------------------------------- processes


class Interrupted(Exception):
    pass


def on_terminate(signum, frame):
    raise Interrupted(f"signal {signum}")


def run(cmd, cwd, timeout, log):
    """Runs cmd in its own process group; kills the whole group on timeout or interruption.
    Returns (exit code or None on timeout, seconds)."""
    started = time.monotonic()
    log.write(f"\n$ {' '.join(map(str, cmd))}   (in {cwd})\n")
    log.flush()
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        code = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_group(proc)
        return None, time.monotonic() - started
    except BaseException:
        kill_group(proc)
        raise
    return code, time.monotonic() - started


def kill_group(proc):
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


# ---------------------------------------------------------------- the scratch copy


def tree_files(root: Path) -> list:
    out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=root,
                         check=True, capture_output=True).stdout
    return [p for p in out.decode().split("\0") if p and (root / p).is_file()]


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def synchronise(root: Path, tree: Path):
    """Copies what differs (so unchanged files keep their times and the build stays incremental),
    and removes files the work tree no longer has."""
    tree.mkdir(parents=True, exist_ok=True)
    manifest = tree / ".mutate-manifest"
    before = set(manifest.read_text().split("\n")) if manifest.exists() else set()
    files = tree_files(root)
    for rel in files:
        src, dst = root / rel, tree / rel
        if dst.is_file() and dst.stat().st_size == src.stat().st_size and digest(dst) == digest(src):
            continue
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dst)
        os.utime(dst)  # newer than any object built from an older copy
    for rel in before - set(files):
        if rel and (tree / rel).is_file():
            (tree / rel).unlink()
    manifest.write_text("\n".join(files))


class Applied:
    """One mutant in the scratch copy, taken out again on every exit path."""

    def __init__(self, tree: Path, mutant: Mutant):
        self.path = tree / mutant.file
        self.mutant = mutant
        self.saved = None

    def __enter__(self):
        self.saved = self.path.read_text()
        self.path.write_text(self.saved.replace(self.mutant.original, self.mutant.replacement, 1))
        return self

    def __exit__(self, *exc):
        self.path.write_text(self.saved)  # a new time: the next build recompiles it (a ccache hit)
        return False


# ---------------------------------------------------------------- builds and tests


class Bench:
    def __init__(self, args, tree: Path, log):
        self.args = args
        self.tree = tree
        self.build = tree / "build"
        self.log = log
        self.test_map = None  # --from-diff: which tests see which file, read after the unmutated build
        self.selected_tests = {}

    def configure(self):
        if (self.build / "CMakeCache.txt").exists():
            return True
        code, _ = run(["cmake", "-S", self.tree, "-B", self.build, "-DCMAKE_BUILD_TYPE=RelWithDebInfo",
                       "-DCMAKE_CXX_COMPILER_LAUNCHER=ccache", "-DCMAKE_C_COMPILER_LAUNCHER=ccache",
                       # A mutant in the engine relinks librung_engine.so, not every program that loads it.
                       "-DCMAKE_LINK_DEPENDS_NO_SHARED=ON",
                       # One mutated file recompiles alone, not its whole batch.
                       "-DRUNG_UNITY_BUILD=OFF"],
                      self.tree, self.args.timeout, self.log)
        return code == 0

    def test_specs(self, mutant):
        """The concept's tests: "EXE" or "EXE:GTEST_FILTER" each; every selected mutant's for the baseline."""
        specs = mutant.tests if mutant else [t for m in self.args.selected for t in m.tests]
        return list(dict.fromkeys(specs))

    def targets(self, mutant):
        if self.args.concept:
            return list(dict.fromkeys(spec.partition(":")[0] for spec in self.test_specs(mutant)))
        return ["all"]

    def compile(self, mutant, timeout):
        cmd = ["nice", "-n", str(self.args.nice), "cmake", "--build", self.build, "-j", str(self.args.jobs), "--target",
               *self.targets(mutant)]
        return run(cmd, self.tree, timeout, self.log)

    def tests_seeing(self, mutant):
        """ctest numbers of the tests that can see the mutant's file (all selected mutants' for the baseline)."""
        files = [mutant.file] if mutant else list(dict.fromkeys(m.file for m in self.args.selected))
        numbers = set()
        for f in files:
            if f not in self.selected_tests:
                if self.test_map is None:
                    self.test_map = TestMap(self.build)
                self.selected_tests[f] = [n for n, _ in self.test_map.tests_for(self.tree / f)]
            numbers.update(self.selected_tests[f])
        return sorted(numbers)

    def test(self, mutant, timeout):
        """(passed, timed out, seconds)"""
        started = time.monotonic()
        if self.args.from_diff and not self.args.tests:
            numbers = self.tests_seeing(mutant)
            if not numbers:
                return True, False, 0.0  # no test can see it: it survives, and the report says why
            cmd = ["nice", "-n", str(self.args.nice), "ctest", "--test-dir", self.build, "-j", str(self.args.jobs),
                   "--output-on-failure", "--stop-on-failure", "-I", "0,0,0," + ",".join(map(str, numbers))]
            code, seconds = run(cmd, self.tree, timeout, self.log)
            return code == 0, code is None, seconds
        if self.args.concept:
            for spec in self.test_specs(mutant):
                exe, _, only = spec.partition(":")
                left = timeout - (time.monotonic() - started)
                cmd = ["nice", "-n", str(self.args.nice), self.build / "tests" / exe, "--gtest_brief=1"]
                code, _ = run(cmd + ([f"--gtest_filter={only}"] if only else []), self.build / "tests", max(left, 1), self.log)
                if code != 0:
                    return False, code is None, time.monotonic() - started
            return True, False, time.monotonic() - started
        cmd = ["nice", "-n", str(self.args.nice), "ctest", "--test-dir", self.build, "-j", str(self.args.jobs),
               "--output-on-failure", "--stop-on-failure"]
        if self.args.tests:
            cmd += ["-R", self.args.tests]
        code, seconds = run(cmd, self.tree, timeout, self.log)
        return code == 0, code is None, seconds


def try_mutant(bench: Bench, mutant: Mutant) -> Result:
    count = mutant.occurrences(bench.tree)
    if count != 1:
        return Result(mutant, "stale", detail=f"snippet occurs {count} times in {mutant.file}")
    if bench.args.from_diff:
        if bench.test_map is None:
            bench.test_map = TestMap(bench.build)
        if not bench.test_map.objects_for(bench.tree / mutant.file):
            return Result(mutant, "not-built", detail="this build compiles nothing from the file")
    started = time.monotonic()
    with Applied(bench.tree, mutant):
        code, seconds = bench.compile(mutant, bench.args.timeout)
        if code != 0:
            return Result(mutant, "build-failed", seconds, "timed out" if code is None else "does not compile")
        passed, timed_out, _ = bench.test(mutant, bench.args.timeout - seconds)
    elapsed = time.monotonic() - started
    if passed:
        if bench.args.from_diff and not bench.args.tests and not bench.tests_seeing(mutant):
            return Result(mutant, "survived", elapsed, "no test can see this file")
        return Result(mutant, "equivalent" if mutant.equivalent else "survived", elapsed, mutant.equivalent)
    return Result(mutant, "killed", elapsed, "the tests timed out" if timed_out else "")


# ---------------------------------------------------------------- reporting


def table(results: list) -> str:
    width = max([len(r.mutant.id) for r in results] + [6])
    lines = [f"{'mutant':<{width}}  {'result':<12} {'s':>6}  what"]
    for r in results:
        note = f" [{r.detail}]" if r.detail else ""
        lines.append(f"{r.mutant.id:<{width}}  {r.status:<12} {r.seconds:6.0f}  {r.mutant.what}{note}")
    return "\n".join(lines)


def score_line(results: list) -> str:
    counts = {s: sum(r.status == s for r in results) for s in ("killed", "survived", "equivalent", "stale", "build-failed", "not-built")}
    judged = counts["killed"] + counts["survived"]
    score = f"{100.0 * counts['killed'] / judged:.1f}%" if judged else "n/a"
    return (f"score {score}: {counts['killed']} killed of {judged} (killed + survived); "
            f"{counts['equivalent']} equivalent, {counts['stale']} stale, {counts['build-failed']} build-failed, "
            f"{counts['not-built']} not built here (not counted)")


def commit_of(root: Path) -> str:
    out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root, capture_output=True,
                           text=True).stdout.strip()
    return out + ("+changes" if dirty else "")


def list_mutants(mutants: list, root: Path):
    for m in mutants:
        count = m.occurrences(root)
        state = "ok" if count == 1 else f"STALE ({count} occurrences)"
        eq = f"  [equivalent: {m.equivalent}]" if m.equivalent else ""
        print(f"{m.id:<28} {state:<10} {m.file:<34} {' '.join(m.tests):<28} {m.what}{eq}")
    stale = sum(m.occurrences(root) != 1 for m in mutants)
    print(f"\n{len(mutants)} mutants, {stale} stale")


# ---------------------------------------------------------------- main


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--list", action="store_true", help="list the mutants and whether each snippet is current")
    p.add_argument("--only", action="append", default=[], help="mutant ids (comma separated, repeatable)")
    p.add_argument("--tests", help="ctest -R REGEX instead of the whole suite")
    p.add_argument("--concept", action="store_true", help="run each mutant's own test executables (its 'tests' line)")
    p.add_argument("--timeout", type=float, default=1800, help="seconds per mutant, build and tests (default 1800)")
    p.add_argument("--jobs", type=int, default=2, help="build and ctest parallelism (default 2)")
    p.add_argument("--nice", type=int, default=10, help="niceness of builds and tests (default 10)")
    p.add_argument("--scratch", type=Path, default=ROOT / "build-mutate", help="scratch directory (default build-mutate/)")
    p.add_argument("--mutants", type=Path, default=DEFAULT_LIST, help="the mutant list")
    p.add_argument("--json", type=Path, help="also write the results as JSON")
    p.add_argument("--no-baseline", action="store_true", help="skip checking that the unmutated tests pass")
    p.add_argument("--from-diff", metavar="BASE", help="mutants made by rule from the lines added since BASE, not the list")
    p.add_argument("--sample", type=int, help="with --from-diff: at most this many, drawn at random by --seed")
    p.add_argument("--seed", type=int, default=1, help="the draw of --sample (default 1), so a run can be repeated")
    args = p.parse_args()

    if args.from_diff:
        if args.concept:
            sys.exit("--concept runs a listed mutant's own tests; a made one's are found from the build (or give --tests)")
        mutants = mutants_from_diff(ROOT, args.from_diff,
                                    lambda i, f, w, o, r: Mutant(id=i, file=f, what=w, tests=[], original=o, replacement=r))
        if args.sample is not None and args.sample < len(mutants):
            made = len(mutants)
            mutants = sorted(random.Random(args.seed).sample(mutants, args.sample), key=lambda m: (m.file, m.id))
            print(f"{args.sample} of the {made} mutants made since {args.from_diff} (seed {args.seed})", flush=True)
    else:
        mutants = parse_mutants(args.mutants)
    if args.list:
        list_mutants(mutants, ROOT)
        return 0
    wanted = {i for spec in args.only for i in spec.split(",") if i}
    unknown = wanted - {m.id for m in mutants}
    if unknown:
        sys.exit(f"no such mutant: {', '.join(sorted(unknown))}")
    args.selected = [m for m in mutants if not wanted or m.id in wanted]
    if args.concept and args.tests:
        sys.exit("--concept and --tests choose the tests two ways; give one")

    scratch = args.scratch.resolve()
    if scratch == ROOT or ROOT.is_relative_to(scratch):
        sys.exit(f"the scratch directory {scratch} must not hold the work tree")
    scratch.mkdir(parents=True, exist_ok=True)
    lock = open(scratch / "lock", "w")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        sys.exit(f"another mutate.py is using {scratch}")
    signal.signal(signal.SIGTERM, on_terminate)
    signal.signal(signal.SIGHUP, on_terminate)

    tree = scratch / "tree"
    log_path = scratch / "mutate.log"
    results = []
    with open(log_path, "w") as log:
        print(f"scratch {tree}; log {log_path}", flush=True)
        try:
            synchronise(ROOT, tree)
            bench = Bench(args, tree, log)
            if not bench.configure():
                sys.exit(f"configuring the scratch build failed; see {log_path}")
            code, seconds = bench.compile(None, args.timeout)
            if code != 0:
                sys.exit(f"the unmutated scratch build failed; see {log_path}")
            print(f"built unmutated in {seconds:.0f} s", flush=True)
            if not args.no_baseline:
                passed, _, seconds = bench.test(None, args.timeout)
                if not passed:
                    sys.exit(f"the unmutated tests fail: nothing can be learnt; see {log_path}")
                print(f"unmutated tests pass in {seconds:.0f} s", flush=True)
            for i, m in enumerate(args.selected, 1):
                log.write(f"\n==== mutant {m.id}: {m.what}\n")
                r = try_mutant(bench, m)
                results.append(r)
                print(f"[{i}/{len(args.selected)}] {m.id}: {r.status} ({r.seconds:.0f} s){' ' + r.detail if r.detail else ''}",
                      flush=True)
        except (KeyboardInterrupt, Interrupted) as e:
            print(f"\ninterrupted ({e or 'Ctrl-C'}); the scratch copy is back to unmutated", file=sys.stderr)
    if not results:
        return 1
    mode = ("its concept's test executables" if args.concept else f"ctest -R {args.tests}" if args.tests
            else "the tests the build's records say see its file" if args.from_diff else "the whole ctest suite")
    print()
    print(table(results))
    print(f"\n{score_line(results)}")
    print(f"{datetime.date.today()} at {commit_of(ROOT)}, each mutant against {mode}")
    if args.json:
        args.json.write_text(json.dumps({
            "date": str(datetime.date.today()), "commit": commit_of(ROOT), "tests": mode, "score": score_line(results),
            "results": [{"id": r.mutant.id, "file": r.mutant.file, "what": r.mutant.what, "status": r.status,
                         "seconds": round(r.seconds), "detail": r.detail} for r in results]}, indent=2) + "\n")
    return 0 if all(r.status != "survived" for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
