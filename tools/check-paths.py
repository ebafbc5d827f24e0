#!/usr/bin/env python3
"""Paths rung chooses and paths it writes, each one way:

1. Default places come from src/os/ only: the user's cache and data
   directories (rung/user_dirs.h: XDG, HOME, else a private rung-<uid> made
   0700 and checked) and the temporary root (os/work_dir.h: a trusted $TMPDIR,
   else /tmp). Reading HOME, XDG_*_HOME or TMPDIR, std::filesystem's
   temp_directory_path, or a "/tmp..." literal anywhere else fails.
2. Every command that writes files checks its outputs against its inputs
   before any work (rung/output_paths.h): a file under cli/ or examples/ that
   writes one (write_json, write_html, write_bench_records, write_bench_html,
   write_file_atomically, commit_file, write_onnx_model) must call
   check_outputs_before_work (cli/output_check.h) or check_output_paths; so must
   each library entry point in LIBRARY_WRITERS, which writes files the caller names.

Comments are ignored; string literals are not (they are what rule 1 looks for).

  tools/check-paths.py [--root DIR]     exit 0 when clean, 1 with one line per finding
"""
import argparse
import pathlib
import re
import sys

from source_text import strip_comments

CHECKED = ["src", "cli", "worker", "examples", "plugins", "include"]
SUFFIXES = {".c", ".cc", ".cpp", ".h", ".hpp"}

# Where the defaults are decided.
DEFAULT_HOMES = {"src/os/posix/user_dirs.cpp", "src/os/windows/user_dirs.cpp", "src/os/work_dir.cpp", "src/os/posix/fresh_dir.cpp", "src/os/windows/fresh_dir.cpp"}
DEFAULT_RULES = [
    ("HOME", re.compile(r'(?:getenv|GetEnvironmentVariable[AW]?)\s*\(\s*L?"(?:HOME|XDG_[A-Z_]*HOME|TMPDIR|TMP|TEMP|LOCALAPPDATA|APPDATA|USERPROFILE)"'),
     "a default directory from the environment: use rung/user_dirs.h (user_cache_dir, user_data_dir) or os/work_dir.h (temporary_root)"),
    ("temp_directory_path", re.compile(r"\btemp_directory_path\s*\("),
     "std::filesystem's temporary directory trusts $TMPDIR blindly: use os/work_dir.h (temporary_root, WorkDir)"),
    ("/tmp", re.compile(r'"/tmp(?:/|")'),
     "a fixed shared directory another user can plant: use rung/user_dirs.h or os/work_dir.h"),
]

# The process environment is the host's: only each system's child_environment.cpp changes
# it (set_own_variable_unless_set, for rung's own executables), never the engine.
ENVIRONMENT_HOMES = {"src/os/posix/child_environment.cpp", "src/os/windows/child_environment.cpp"}
ENVIRONMENT_WRITES = re.compile(r"\b(?:setenv|putenv|unsetenv|clearenv|_w?putenv(?:_s)?|SetEnvironmentVariable[AW]?)\s*\(")

# Progress drawn in place: one home, which draws only when stderr is a terminal.
PROGRESS_HOME = "cli/progress.cpp"
PROGRESS = re.compile(r'\\033\[K|\\x1b\[|\bisatty\s*\(')
# The terminal test itself is the operating system's (rung/terminal.h), which progress.cpp asks.
TERMINAL_TEST_HOME = "src/os/posix/this_process.cpp"

WRITES = re.compile(r"\b(?:write_json|write_html|write_bench_records|write_bench_html|write_file_atomically|commit_file|write_onnx_model)\s*\(")
CHECKS = re.compile(r"\b(?:check_outputs_before_work|check_output_paths)\s*\(")
OUTPUT_SIDES = ["cli/", "examples/"]
# Library entry points that write files their callers name, each checked there too (for applications).
LIBRARY_WRITERS = ["src/quantise/quantise.cpp"]


def check(root):
    findings = []
    for folder in CHECKED:
        for path in sorted((root / folder).rglob("*")):
            if path.suffix not in SUFFIXES or not path.is_file():
                continue
            rel = path.relative_to(root).as_posix()
            code = strip_comments(path.read_text(errors="replace"), keep_strings=True)
            if rel not in DEFAULT_HOMES:
                for name, pattern, why in DEFAULT_RULES:
                    for m in pattern.finditer(code):
                        line = code.count("\n", 0, m.start()) + 1
                        findings.append(f"{rel}:{line}: {name}: {why}")
            if rel not in ENVIRONMENT_HOMES:
                for m in ENVIRONMENT_WRITES.finditer(code):
                    line = code.count("\n", 0, m.start()) + 1
                    findings.append(f"{rel}:{line}: environment: the process environment is the host application's: lend a variable "
                                    "to the workers (os/child_environment.h set_child_variable) instead")
            if rel != PROGRESS_HOME:
                for m in PROGRESS.finditer(code):
                    if rel == TERMINAL_TEST_HOME and m.group(0).startswith("isatty"):
                        continue
                    line = code.count("\n", 0, m.start()) + 1
                    findings.append(f"{rel}:{line}: progress: a line drawn in place or a terminal test outside {PROGRESS_HOME}: "
                                    "use cli/progress.h (progress_on_terminal, show_progress_line), which draws only on a terminal")
            must_check = rel in LIBRARY_WRITERS or (any(rel.startswith(p) for p in OUTPUT_SIDES) and WRITES.search(code))
            if must_check and not CHECKS.search(code):
                m = WRITES.search(code)
                line = code.count("\n", 0, m.start()) + 1 if m else 1
                findings.append(f"{rel}:{line}: writes files without checking them against its inputs first: call "
                                "check_outputs_before_work (cli/output_check.h) with every output and input before any work")
    return findings


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=pathlib.Path, default=pathlib.Path(__file__).resolve().parent.parent)
    args = parser.parse_args()
    findings = check(args.root)
    for f in findings:
        print(f)
    print(f"{len(findings)} problem{'s' if len(findings) != 1 else ''}", file=sys.stderr)
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
