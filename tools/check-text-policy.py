#!/usr/bin/env python3
"""Fails when text leaves rung's programs by a way other than its two writers:

  json   a JSON document becomes text in rung::json_text alone (rung/json_text.h:
         bytes that are not UTF-8 replaced, never a throw);
  print  text reaches stdout or stderr through rung::print alone (rung/print.h:
         control characters and bytes that are not UTF-8 escaped).

  check-text-policy.py --nm nm [--objdump objdump] OBJECTS.txt

OBJECTS.txt lists the object files of rung's programs and libraries. The
check reads their symbols, so no spelling escapes it: json.dump(), an
ordered_json's dump, operator<< and nlohmann::to_string all instantiate
nlohmann's serializer in the object that uses them; fmt::print, printf (which
the compiler may turn into puts), fputs, fwrite and std::cout all leave an
undefined reference. Only each writer's own object may hold them, and it must,
so a compiler that stopped emitting them is noticed rather than passed.
"""
import pathlib
import re
import subprocess
import sys

from object_symbols import call_sites, checker_arguments

STDIO = {"fwrite", "fputs", "fputc", "putc", "_IO_putc", "putchar", "puts", "printf", "fprintf", "vprintf", "vfprintf",
         "dprintf", "vdprintf", "perror", "fputws", "fputwc", "putwc", "putwchar", "wprintf", "fwprintf",
         "__printf_chk", "__fprintf_chk", "__vprintf_chk", "__vfprintf_chk", "__dprintf_chk", "__vdprintf_chk"}
STREAMS = re.compile(r"^std::(cout|cerr|clog|wcout|wcerr|wclog)$")
FMT_PRINT = re.compile(r"^fmt::v\d+::(v?print|vprint_mojibake)\(")
SERIALIZER = re.compile(r"nlohmann::[\w:]*detail::serializer<.*>::dump\(|nlohmann::[\w:]*basic_json<.*>::dump\(")

RULES = {
    "json": ("json_text.cpp.o", "writes JSON text without rung::json_text (rung/json_text.h)",
             lambda kind, symbol: bool(SERIALIZER.search(symbol))),
    "print": ("print.cpp.o", "prints without rung::print (rung/print.h)",
              lambda kind, symbol: kind == "U" and (symbol in STDIO or bool(STREAMS.match(symbol)) or bool(FMT_PRINT.match(symbol)))),
}


def symbols_of(nm, obj):
    out = subprocess.run([nm, "-C", obj], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"check-text-policy: {nm} {obj}: {out.stderr.strip()}")
    for line in out.stdout.splitlines():
        m = re.match(r"^[0-9a-f ]{8,16} ([A-Za-z]) (.*)$", line)
        if m:
            yield m.group(1), m.group(2)


def main():
    args, objects = checker_arguments("check-text-policy", "name the functions that bypass a writer")
    writer_seen = {rule: False for rule in RULES}
    bypasses = {rule: 0 for rule in RULES}
    for obj in objects:
        symbols = list(symbols_of(args.nm, obj))
        for rule, (writer, why, matches) in RULES.items():
            found = []
            for kind, symbol in symbols:
                if matches(kind, symbol) and symbol not in found:
                    found.append(symbol)
            if pathlib.Path(obj).name == writer:
                writer_seen[rule] = writer_seen[rule] or bool(found)
                continue
            if not found:
                continue
            bypasses[rule] += 1
            print(f"{obj}: {why}")
            for symbol in found[:3]:
                print(f"    {symbol[:160]}")
            if args.objdump:
                for site in call_sites(args.objdump, obj, [s.split("(")[0] for s in found])[:5]:
                    print(f"    called in {site[:160]}")
    failed = False
    for rule, (writer, _, _) in RULES.items():
        if bypasses[rule]:
            print(f"FAIL {rule}: {bypasses[rule]} of {len(objects)} objects bypass {writer}")
            failed = True
        elif not writer_seen[rule]:
            print(f"FAIL {rule}: no listed object named {writer} holds what it writes with: the check cannot tell a bypass")
            failed = True
    if failed:
        return 1
    print(f"PASS: {len(objects)} objects write JSON through rung::json_text and print through rung::print alone")
    return 0


if __name__ == "__main__":
    sys.exit(main())
