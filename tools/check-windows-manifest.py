#!/usr/bin/env python3
"""Fails unless each Windows program carries a manifest (resource 1 of type 24,
RT_MANIFEST) that declares it long-path aware: without one, Windows refuses a
path past MAX_PATH to the program whatever its LongPathsEnabled setting.

  check-windows-manifest.py --windres x86_64-w64-mingw32-windres PROGRAM.exe...

The manifest is read back from the linked program by windres, and parsed as
the XML Windows reads.
"""
import argparse
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

SETTINGS_2016 = "{http://schemas.microsoft.com/SMI/2016/WindowsSettings}"
ASM_V3 = "{urn:schemas-microsoft-com:asm.v3}"


def manifest_of(windres, program):
    """The text of the program's RT_MANIFEST resource 1, or an error string."""
    out = subprocess.run([windres, "-J", "coff", "-i", program, "-O", "rc"], capture_output=True, text=True)
    if out.returncode != 0:
        return None, f"windres cannot read its resources: {out.stderr.strip()}"
    m = re.search(r"^1 24 [^\n]*\nBEGIN\n(.*?)^END", out.stdout, re.S | re.M)
    if not m:
        return None, "no manifest (resource 1 of type 24)"
    text = "".join(s.replace('""', '"') for s in re.findall(r'"((?:[^"]|"")*)"', m.group(1)))
    return text.encode().decode("unicode_escape"), None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--windres", required=True)
    ap.add_argument("programs", nargs="+")
    args = ap.parse_args()
    failed = 0
    for program in args.programs:
        text, error = manifest_of(args.windres, program)
        if text is not None:
            try:
                root = ET.fromstring(text)
                aware = root.findall(f"{ASM_V3}application/{ASM_V3}windowsSettings/{SETTINGS_2016}longPathAware")
                if not aware or (aware[0].text or "").strip().lower() != "true":
                    error = "its manifest does not declare longPathAware true"
            except ET.ParseError as e:
                error = f"its manifest is not XML Windows can read: {e}"
        if error:
            failed += 1
            print(f"{program}: {error}")
    if failed:
        print(f"FAIL: {failed} of {len(args.programs)} program(s) not declared long-path aware")
        return 1
    print(f"PASS: {len(args.programs)} program(s) declared long-path aware")
    return 0


if __name__ == "__main__":
    sys.exit(main())
