#!/usr/bin/env python3
"""Fails when a Windows object makes a path from narrow text, or lists or removes
a directory with std::filesystem (rung/path_text.h and rung/directory.h say why).

  check-windows-path-text.py --nm x86_64-w64-mingw32-nm [--objdump ...] OBJECTS.txt

OBJECTS.txt lists object files compiled with -O0 -fno-inline, so that every
template instance a source makes is still in its object. A path made from a
string literal (char[N], ASCII) is allowed; from a std::string, a string_view
or a char pointer it is not.
"""
import re
import subprocess
import sys

from object_symbols import call_sites, checker_arguments

NARROW = r"(std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >|std::basic_string_view<char, std::char_traits<char> >|char const\*|char\*)"
RULES = [
    (re.compile(r"std::filesystem::__cxx11::path::(path|operator=|operator/=|operator\+=|append|concat|assign)<" + NARROW + r"[,>]"),
     "a path made from narrow text: use rung::path_from_utf8 (rung/path_text.h)"),
    (re.compile(r"std::filesystem::(__cxx11::)?(recursive_)?directory_iterator::|std::filesystem::remove_all\("),
     "a directory listed or removed by std::filesystem: use rung/directory.h"),
]


def main():
    args, objects = checker_arguments("check-windows-path-text", "name the functions that make each conversion")
    found = 0
    for obj in objects:
        out = subprocess.run([args.nm, "-C", obj], capture_output=True, text=True)
        if out.returncode != 0:
            sys.exit(f"check-windows-path-text: {args.nm} {obj}: {out.stderr.strip()}")
        flagged = []
        for line in out.stdout.splitlines():
            symbol = line[19:] if len(line) > 19 else line
            for rule, why in RULES:
                if rule.search(symbol) and (why, symbol) not in flagged:
                    flagged.append((why, symbol))
        for why, symbol in flagged:
            found += 1
            print(f"{obj}: {why}\n    {symbol}")
        if flagged and args.objdump:
            for site in call_sites(args.objdump, obj, [symbol.split("(")[0] for _, symbol in flagged]):
                print(f"    called in {site}")
    if found:
        print(f"FAIL: {found} narrow conversion(s) or std::filesystem listing(s) in {len(objects)} objects")
        return 1
    print(f"PASS: {len(objects)} objects make paths from UTF-8 only, and list and remove through rung/directory.h")
    return 0


if __name__ == "__main__":
    sys.exit(main())
