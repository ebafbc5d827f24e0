#!/usr/bin/env python3
"""Checks that the C ABI only grows. src/capi/abi-symbols.txt lists every
function ever published, each with the ABI version that added it. The built
librung_engine must export exactly rung_ symbols, every listed one among them
(a published function never goes away), and nothing unlisted (a new function is
listed, with the version that adds it, in the same change); the newest version
listed must equal RUNG_ABI_VERSION in include/rung/rung.h, and every function
listed must be declared there.
  check-abi.py LIBRARY
Exit 0 when it holds; 1 and one line per problem otherwise."""
import pathlib
import re
import subprocess
import sys


def main():
    root = pathlib.Path(__file__).resolve().parent.parent
    library = sys.argv[1]
    listed = {}
    for n, line in enumerate((root / "src/capi/abi-symbols.txt").read_text().splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        version, name = line.split()
        listed[name] = (int(version), n)
    header = (root / "include/rung/rung.h").read_text()
    declared = set(re.findall(r"\bRUNG_API\b[^;]*?\b(rung_\w+)\s*\(", header, re.S))
    m = re.search(r"#define\s+RUNG_ABI_VERSION\s+(\d+)", header)
    abi_version = int(m.group(1)) if m else 0
    out = subprocess.run(["nm", "-D", "--defined-only", library], capture_output=True, text=True, check=True).stdout
    exported = {line.split()[-1] for line in out.splitlines() if line.strip()}
    problems = []
    for name in sorted(exported):
        if not name.startswith("rung_"):
            problems.append(f"{library} exports {name}: only the C ABI's rung_ functions may leave it")
        elif name not in listed:
            problems.append(f"{name} is exported but not in src/capi/abi-symbols.txt: list it with the ABI version that adds it")
    for name, (version, n) in sorted(listed.items()):
        if name not in exported:
            problems.append(f"src/capi/abi-symbols.txt:{n}: {name} (ABI {version}) is no longer exported: a published function never goes away")
        if name not in declared:
            problems.append(f"src/capi/abi-symbols.txt:{n}: {name} is not declared with RUNG_API in include/rung/rung.h")
        if version > abi_version:
            problems.append(f"src/capi/abi-symbols.txt:{n}: {name} is from ABI {version}, above RUNG_ABI_VERSION {abi_version}")
    newest = max((v for v, _ in listed.values()), default=0)
    if newest != abi_version:
        problems.append(f"RUNG_ABI_VERSION is {abi_version} but the newest function listed is from ABI {newest}")
    for p in problems:
        print(p)
    if not problems:
        print(f"the C ABI {abi_version}: {len(listed)} functions, all exported, nothing else")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
