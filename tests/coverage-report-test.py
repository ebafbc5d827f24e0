#!/usr/bin/env python3
"""tools/coverage_report.py on a tracefile made for it: one file seen from two objects (a
unity build includes a header in many), a branch reached in one only, a line never run."""

import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
TRACE = """TN:
SF:{root}/src/core/rule.cpp
DA:10,1
DA:11,0
DA:12,0
BRDA:10,0,0,1
BRDA:10,0,1,0
BRDA:12,1,0,-
BRDA:12,1,1,-
end_of_record
TN:
SF:{root}/src/core/rule.cpp
DA:10,2
DA:11,3
DA:12,0
BRDA:10,0,0,0
BRDA:10,0,1,4
BRDA:12,1,0,-
BRDA:12,1,1,-
end_of_record
SF:{root}/cli/main.cpp
DA:1,1
BRDA:1,0,0,1
BRDA:1,0,1,1
end_of_record
"""


def main():
    failures = []
    with tempfile.TemporaryDirectory() as scratch:
        trace = os.path.join(scratch, "rung.info")
        summary = os.path.join(scratch, "summary.txt")
        with open(trace, "w") as f:
            f.write(TRACE.format(root=ROOT))
        run = subprocess.run([sys.executable, os.path.join(ROOT, "tools/coverage_report.py"), trace,
                              "--root", ROOT, "--summary", summary, "--failed-tests", "2"],
                             capture_output=True, text=True)
        if run.returncode != 0:
            print(run.stderr)
            return 1
        report = run.stdout
        figures = open(summary).read()

        def expect(text, where, name):
            if text not in where:
                failures.append(f"{name}: expected {text!r} in:\n{where}")

        def refuse(text, where, name):
            if text in where:
                failures.append(f"{name}: did not expect {text!r} in:\n{where}")

        # Line 10's two branches were each taken in one object: both count as taken.
        refuse("src/core/rule.cpp:10:", report, "branches taken in different objects add up")
        expect("src/core/rule.cpp:12: 2 of 2 never taken (the line never ran)", report, "a line never run")
        expect("src/core/rule.cpp: 2 branches never taken; branches 2 of 4 taken (50.0%), lines 2 of 3", report,
               "the file's figures")
        refuse("cli/main.cpp", report, "a file with every branch taken is not listed")
        expect("2 files: lines 3 of 4 (75.0%), branches 4 of 6 (66.7%); 2 tests failed", figures, "the whole")
        expect("src/core", figures, "a concept's row")
        expect("cli", figures, "the CLI's row")
    for failure in failures:
        print("FAIL", failure)
    print("PASS" if not failures else f"{len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
