#!/usr/bin/env python3
"""An embedded engine never tells its application of a command-line flag it cannot
pass: no text in librung_engine names one ("--max-tensor-mb", "--deadline").
Messages name settings through rung/setting_names.h, whose names the CLI installs
for itself; the library's own are the C ABI's keys or nothing.

Reads the library's bytes as `strings` does (runs of 4 or more printable
characters) and fails on each `--word` in them, but the worker's own protocol
(--channel, --parent, --memory-limit-mb), which the engine passes to the
worker it starts.

  tools/check-no-flags-in-engine.py LIBRARY
"""
import re
import sys

WORKER_PROTOCOL = {"--channel", "--parent", "--memory-limit-mb"}


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    data = open(sys.argv[1], "rb").read()
    found = {}
    for run in re.findall(rb"[\x20-\x7e]{4,}", data):
        text = run.decode("ascii")
        for flag in re.findall(r"(?<![\w-])--[a-z][a-z0-9-]+", text):
            if flag not in WORKER_PROTOCOL:
                found.setdefault(flag, text)
    if found:
        for flag, text in sorted(found.items()):
            print(f"{sys.argv[1]} names the command-line flag {flag}: '{text}'")
        print(f"{len(found)} flag(s) in the engine library: name a setting with rung/setting_names.h")
        return 1
    print(f"{sys.argv[1]} names no command-line flag")
    return 0


if __name__ == "__main__":
    sys.exit(main())
