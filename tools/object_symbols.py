"""What an object file's symbols say, for rung's CI checks that the toolchain
holds (tools/check-windows-path-text.py, tools/check-text-policy.py)."""
import argparse
import re
import subprocess
import sys


def call_sites(objdump, obj, symbols):
    """The functions in `obj` that call one of `symbols`."""
    out = subprocess.run([objdump, "-d", "-r", "-C", obj], capture_output=True, text=True).stdout
    where, sites = "?", []
    for line in out.splitlines():
        m = re.match(r"^[0-9a-f]+ <(.*)>:$", line)
        if m:
            where = m.group(1)
        elif ("IMAGE_REL_" in line or "R_X86_64" in line) and any(s in line for s in symbols):
            if where not in sites and not any(where.startswith(s) for s in symbols):
                sites.append(where)
    return sites


def checker_arguments(name, objdump_help):
    """The command line every object checker takes (--nm NM [--objdump OBJDUMP]
    OBJECTS.txt), and the object files OBJECTS.txt lists, one a line."""
    ap = argparse.ArgumentParser(prog=name)
    ap.add_argument("--nm", required=True)
    ap.add_argument("--objdump", help=objdump_help)
    ap.add_argument("objects")
    args = ap.parse_args()
    objects = [line.strip() for line in open(args.objects) if line.strip()]
    if not objects:
        sys.exit(f"{name}: no objects listed")
    return args, objects
