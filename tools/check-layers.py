#!/usr/bin/env python3
"""Checks that rung's include lines point one way: a folder under src/ includes
only from itself and from folders below it. Public headers (include/rung/) count
as part of the folder that implements them. Exit 0 when clean; 1 and one line
per offending include otherwise."""
import pathlib
import re
import sys

# Lower numbers are lower layers. A folder may include only from lower ranks.
RANKS = {
    "os": 0,
    "core": 1,
    "runtime": 2, "graph": 2, "decode": 2, "image": 2,
    "session": 3,
    "jobs": 4,
    "probe": 5, "bench": 5, "parity": 5, "conform": 5,
    "engine": 6, "quantise": 6,
    "variants": 7,
    "capi": 8, "registry": 8, "pipeline": 8,
    "manifest_lint": 9,
}

# Which folder implements each public header; result.h is the vocabulary every layer speaks.
PUBLIC = {
    "result": None, "status": None,
    "termination": "os", "terminal": "os", "command_line": "os", "user_dirs": "os", "path_text": "os", "json_text": "os", "print": "os", "directory": "os", "output_paths": "os", "rung_programs": "os", "setting_names": "os",
    "tensor": "core", "tolerance": "core", "hardware": "core", "ladder": "core", "model": "core",
    "geometry": "core", "input_spec": "core", "limits": "core", "printable": "os",
    "cpus": "os",
    "runtime": "runtime", "standing": "runtime", "software_gpu": "runtime", "rung_names": "runtime",
    "decode": "decode", "image": "image",
    "probe": "probe", "engine_core": "engine", "number_text": "core",
    "rung": "capi", "engine": "capi",
    "bench": "bench", "bench_compare": "bench", "bench_html": "bench", "bench_record": "bench",
    "parity": "parity", "conform": "conform", "pipeline": "pipeline",
    "quantise": "quantise",
    "registry": "registry",
    "variants": "variants", "manifest_lint": "manifest_lint",
}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def folder_of_include(name):
    parts = name.split("/")
    if parts[0] == "rung" and len(parts) == 2:
        stem = parts[1].rsplit(".", 1)[0]
        if stem not in PUBLIC:
            return "?" + stem
        return PUBLIC[stem]
    if len(parts) >= 2 and parts[0] in RANKS:
        return parts[0]
    return None  # a third-party or same-directory header


def main():
    root = pathlib.Path(__file__).resolve().parent.parent
    problems = []
    sources = []
    for path in sorted((root / "src").rglob("*")):
        if path.suffix in (".h", ".cpp"):
            folder = path.relative_to(root / "src").parts[0]
            if len(path.relative_to(root / "src").parts) == 1:
                problems.append(f"{path.relative_to(root)}: sits in src/ itself; every file belongs to a concept folder")
                continue
            if folder not in RANKS:
                problems.append(f"{path.relative_to(root)}: folder '{folder}' has no rank in tools/check-layers.py")
                continue
            sources.append((path, folder))
    for path in sorted((root / "include" / "rung").glob("*.h")):
        stem = path.stem
        if stem not in PUBLIC:
            problems.append(f"{path.relative_to(root)}: public header with no folder in tools/check-layers.py")
            continue
        sources.append((path, PUBLIC[stem]))
    for path, folder in sources:
        text = path.read_text(encoding="utf-8")
        for lineno, line in enumerate(text.splitlines(), 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            target = folder_of_include(m.group(1))
            if target is None or target == folder:
                continue
            if target.startswith("?"):
                problems.append(f"{path.relative_to(root)}:{lineno}: includes unknown public header {m.group(1)}")
                continue
            mine = -1 if folder is None else RANKS[folder]
            if RANKS[target] >= mine:
                problems.append(f"{path.relative_to(root)}:{lineno}: {folder or 'result.h'} (rank {mine}) includes "
                                f"{m.group(1)} from {target} (rank {RANKS[target]}): dependencies must point down")
    for p in problems:
        print(p)
    print(f"{len(sources)} files checked, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
