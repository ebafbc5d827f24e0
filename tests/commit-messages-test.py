#!/usr/bin/env python3
"""tools/check-commit-messages.py at the bounds of its rule, one part at a time."""
import pathlib
import subprocess
import sys
import tempfile

CHECK = pathlib.Path(__file__).resolve().parent.parent / "tools" / "check-commit-messages.py"
BODY = "\n\nWhy it changed.\n"
CASES = [  # (what, message, holds)
    ("a subject of 72 characters", "s" * 72 + BODY, True),
    ("a subject of 73 characters", "s" * 73 + BODY, False),
    ("a subject of 1 character", "s" + BODY, True),
    ("no subject", "\n\nWhy.\n", False),
    ("a subject alone", "Subject\n", False),
    ("a subject and a blank line alone", "Subject\n\n\n", False),
    ("a body with no blank line before it", "Subject\nWhy.\n", False),
    ("git's comment lines are not a body", "Subject\n\n# Please enter the commit message\n", False),
    ("git's comment lines around a message", "# comment\nSubject\n\nWhy.\n# comment\n", True),
]


def main():
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for what, message, holds in CASES:
            path = pathlib.Path(tmp) / "COMMIT_EDITMSG"
            path.write_text(message)
            r = subprocess.run([sys.executable, str(CHECK), str(path)], capture_output=True, text=True)
            if (r.returncode == 0) != holds:
                failed += 1
                print(f"FAIL  {what}: exit {r.returncode}, expected {'0' if holds else '1'} {r.stderr.strip()}")
            else:
                print(f"PASS  {what}")
    print(f"{len(CASES) - failed} of {len(CASES)} cases hold")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
