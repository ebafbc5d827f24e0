#!/usr/bin/env bash
# This machine as Windows sees it, read back by rung: describe-hardware.exe (the
# Windows build's os/hardware_description.h, under wine) prints the description,
# and the Linux rung doctor reads it as a windows.json device, by the one reader.
#   windows-description-test.sh RUNG_CLI WINDOWS_BUILD_DIR SOURCE_DIR
set -euo pipefail
rung=$1 windows_build=$2 source=$3
dir=$(mktemp -d "${TMPDIR:-/tmp}/rung-windows-description.XXXXXX")
trap 'rm -rf "$dir"' EXIT
"$source/tools/windows-run" "$windows_build/describe-hardware.exe" >"$dir/windows.json"
env -u RUNG_ORT_DIR "$rung" doctor --json --hardware-root "$dir" >"$dir/doctor.json"
/usr/bin/python3 - "$dir/doctor.json" "$(nproc --all)" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
hw = d["hardware"]
problems = []
if hw["os"] != "windows": problems.append(f"os is {hw['os']}")
if hw["cpu"]["logical_cpus"] != int(sys.argv[2]): problems.append(f"logical CPUs {hw['cpu']['logical_cpus']}, nproc says {sys.argv[2]}")
if hw["cpu"]["physical_cores"] < 1: problems.append("no cores")
if not hw["cpu"]["model"]: problems.append("no CPU name")
# wine has no Direct3D GPU here: no adapter, and the reason said, not a silent empty list.
if not hw["adapters"] and not any("no adapter listed" in u for u in hw["unreadable"]): problems.append(f"no adapters and no reason: {hw['unreadable']}")
if any("no adapter listed" not in u for u in hw["unreadable"]): problems.append(f"unreadable: {hw['unreadable']}")
if problems:
    print("FAIL:", "; ".join(problems)); sys.exit(1)
print(f"read back: windows, {hw['cpu']['model']}, {hw['cpu']['physical_cores']} cores, {len(hw['adapters'])} adapters, platforms {d['platforms']}")
PY
