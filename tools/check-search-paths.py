#!/usr/bin/env python3
"""Fails when a program or library rung builds would look for libraries in the
working directory, or anywhere else that depends on where it is started from.

The dynamic loader reads an empty entry of DT_RPATH or DT_RUNPATH as the
current directory, and a relative entry ("lib", "../x") relative to it: a
`rung probe` started in a directory holding a planted libfmt.so.9 would then
run that file's code. CMake pads a build tree's RUNPATH with colons (empty
entries) when the installed one is longer, so this happens without anyone
writing it. Every entry must be absolute or start with $ORIGIN (the file's own
directory).

  tools/check-search-paths.py DIR...     every ELF program and shared library under each DIR
"""
import os
import struct
import sys

DT_RPATH, DT_RUNPATH, DT_STRTAB = 15, 29, 5
ET_EXEC, ET_DYN = 2, 3
PT_LOAD, PT_DYNAMIC = 1, 2


class NotElf(Exception):
    pass


def search_paths(path):
    """The DT_RPATH and DT_RUNPATH strings of an ELF program or shared library ({} if none)."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"\x7fELF" or len(data) < 64:
        raise NotElf
    bits64 = data[4] == 2
    end = "<" if data[5] == 1 else ">"
    if bits64:
        e_type, = struct.unpack_from(end + "H", data, 16)
        phoff, = struct.unpack_from(end + "Q", data, 32)
        phentsize, phnum = struct.unpack_from(end + "HH", data, 54)
    else:
        e_type, = struct.unpack_from(end + "H", data, 16)
        phoff, = struct.unpack_from(end + "I", data, 28)
        phentsize, phnum = struct.unpack_from(end + "HH", data, 42)
    if e_type not in (ET_EXEC, ET_DYN):
        raise NotElf  # an object file or a core: nothing loads it
    loads, dynamic = [], None
    for i in range(phnum):
        at = phoff + i * phentsize
        if bits64:
            p_type, _, p_offset, p_vaddr, _, p_filesz = struct.unpack_from(end + "IIQQQQ", data, at)
        else:
            p_type, p_offset, p_vaddr, _, p_filesz = struct.unpack_from(end + "IIIII", data, at)
        if p_type == PT_LOAD:
            loads.append((p_vaddr, p_offset, p_filesz))
        elif p_type == PT_DYNAMIC:
            dynamic = (p_offset, p_filesz)
    if dynamic is None:
        return {}  # linked statically

    def file_offset(vaddr):
        for v, off, size in loads:
            if v <= vaddr < v + size:
                return off + (vaddr - v)
        raise ValueError(f"address {vaddr:#x} is in no loaded segment")

    entries, strtab = [], None
    fmt, size = (end + "qQ", 16) if bits64 else (end + "iI", 8)
    for at in range(dynamic[0], dynamic[0] + dynamic[1], size):
        tag, val = struct.unpack_from(fmt, data, at)
        if tag == 0:
            break
        if tag == DT_STRTAB:
            strtab = file_offset(val)
        elif tag in (DT_RPATH, DT_RUNPATH):
            entries.append((tag, val))
    found = {}
    for tag, val in entries:
        start = strtab + val
        text = data[start:data.index(b"\0", start)].decode("utf-8", "replace")
        found["RPATH" if tag == DT_RPATH else "RUNPATH"] = text
    return found


def problems_of(text):
    """What is wrong with one search-path string: each entry that is not absolute nor $ORIGIN-based."""
    out = []
    for entry in text.split(":"):
        if entry == "":
            problem = "an empty entry (the working directory)"
            if problem not in out:
                out.append(problem)
        elif not (entry.startswith("/") or entry.startswith("$ORIGIN") or entry.startswith("${ORIGIN}")):
            out.append(f"'{entry}' (relative to the working directory)")
    return out


def main(dirs):
    if not dirs:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    checked, failures = 0, []
    for top in dirs:
        if not os.path.isdir(top):
            print(f"check-search-paths: {top}: not a directory", file=sys.stderr)
            return 2
        for root, subdirs, files in os.walk(top):
            subdirs[:] = [d for d in subdirs if d not in ("CMakeFiles", "wineprefix", "incremental", "deps")]
            for name in files:
                path = os.path.join(root, name)
                if os.path.islink(path) or not os.path.isfile(path):
                    continue
                try:
                    found = search_paths(path)
                except (NotElf, struct.error, ValueError, OSError):
                    continue
                checked += 1
                for kind, text in found.items():
                    for p in problems_of(text):
                        failures.append(f"{path}: {kind} [{text}] has {p}")
    for f in failures:
        print(f"check-search-paths: {f}", file=sys.stderr)
    if failures:
        print("check-search-paths: a library search path must be absolute or start with $ORIGIN "
              "(CMake pads a build tree's RUNPATH with empty entries when it is shorter than the installed one)",
              file=sys.stderr)
        return 1
    print(f"check-search-paths: {checked} programs and libraries, no search path that depends on the working directory")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
