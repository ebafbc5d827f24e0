#!/usr/bin/env python3
"""One way in for files: every file rung reads, and every JSON text it parses,
goes through src/os/ (os/read_file.h: read_input_file by FileKind, with its
size limit, regular files only; os/json_input.h: parse_json, read_json_file,
nesting bounded). This check fails, naming file:line, on a way around it
outside src/os/: std::ifstream / std::fstream, fopen / std::FILE, the open(2)
family and mmap, a JSON library's own parse (json::parse, ordered_json::parse,
an alias's ::parse, from_cbor, ...), and stb_image's loaders.

tests/, fuzz/ and bench/ may read files as they like; anything else that must
is in ALLOWED below with its reason. Comments and string literals are ignored.

  tools/check-inputs.py [--root DIR]     exit 0 when clean, 1 with one line per finding
"""
import re
import sys

from source_text import line_finder, run_source_check, strip_comments

# Folders checked, relative to the root; src/os/ is where the readers live.
CHECKED = ["src", "cli", "worker", "examples", "plugins", "include"]
EXEMPT_PREFIXES = ["src/os/", "tests/", "fuzz/", "bench/"]

# (path or folder prefix, finding name, why it may).
ALLOWED = [
    ("src/image/io.cpp", "stb_image",
     "image decoding is not an OS concern: stb_image decodes, from memory, the bytes read_input_file(FileKind::kImage) read"),
    ("plugins/sim-accelerator/", "fopen",
     "a test plugin (the simulated accelerator ONNX Runtime loads), not rung: it appends its trace for tests to read"),
    ("examples/c/", "fopen",
     "an application written against the C ABI alone (rung/rung.h) reads its own input; rung's readers are C++ internals it does not link"),
]

RULES = [
    ("ifstream", re.compile(r"\b(?:std\s*::\s*)?(?:basic_|w)?i?fstream\b"),
     "a file stream: read through os/read_file.h (read_input_file with its FileKind)"),
    ("fopen", re.compile(r"\b(?:std\s*::\s*)?(?:fopen|freopen|fdopen|fopen64)\s*\(|\bstd\s*::\s*FILE\b|\bFILE\s*\*"),
     "C stdio on a file: read through os/read_file.h"),
    # open(...O_RDONLY...) unqualified, or ::open( qualified by the global namespace alone (Registry::open is a function of rung's).
    ("open(2)", re.compile(r"(?<![\w.>:])(?:open|open64|openat|openat2|creat)\s*\([^;]*\bO_[A-Z]+|(?<![\w>\s])\s*::\s*(?:open|open64|openat|openat2|creat)\s*\("),
     "the open(2) system call: only src/os/ calls the OS"),
    ("mmap", re.compile(r"\bmmap(?:64)?\s*\("), "mmap: only src/os/ calls the OS"),
    ("json::parse", None, "a JSON library's own parser: parse through os/json_input.h (parse_json, read_json_file: nesting bounded)"),
    ("stb_image", re.compile(r"\bstbi_(?:load|info)\w*\s*\("), "stb_image reading: images are read by image/io.cpp"),
    ("read_regular_file", re.compile(r"\bread_regular_file\s*\("),
     "a limit of its own: name the FileKind (read_input_file, read_input_file_if_usable), so one table holds every limit"),
]

# nlohmann's ways in, named by the type (json, ordered_json, basic_json<...>, or an alias of one).
JSON_READERS = r"(?:parse|accept|sax_parse|from_cbor|from_msgpack|from_ubjson|from_bjdata|from_bson)"
JSON_TYPE = re.compile(r"\b(?:nlohmann\s*::\s*)?(?:json|ordered_json|basic_json\s*<[^;{}]*?>)\s*::\s*" + JSON_READERS + r"\s*\(")
ALIAS = re.compile(r"\busing\s+(\w+)\s*=\s*(?:::)?\s*(?:nlohmann\s*::\s*)?(?:json|ordered_json|basic_json\b[^;]*)\s*;"
                   r"|\btypedef\s+(?:::)?\s*(?:nlohmann\s*::\s*)?(?:json|ordered_json|basic_json\b[^;]*?)\s+(\w+)\s*;")


def allowed(rel, name):
    return any(name == rule and (rel == where or (where.endswith("/") and rel.startswith(where))) for where, rule, _ in ALLOWED)


def findings_in(rel, text):
    # Preprocessor lines are not calls (#include <fstream> alone reads nothing).
    code = re.sub(r"(?m)^[ \t]*#.*$", lambda m: " " * len(m.group(0)), strip_comments(text))
    aliases = {a for m in ALIAS.finditer(code) for a in m.groups() if a}
    alias_use = re.compile(r"\b(?:" + "|".join(map(re.escape, sorted(aliases))) + r")\s*::\s*" + JSON_READERS + r"\s*\(") if aliases else None
    line_of = line_finder(code)

    out = []
    for name, pattern, advice in RULES:
        if allowed(rel, name):
            continue
        patterns = [JSON_TYPE] + ([alias_use] if alias_use else []) if pattern is None else [pattern]
        seen = set()
        for p in patterns:
            for m in p.finditer(code):
                line = line_of(m.start())
                if line in seen:
                    continue
                seen.add(line)
                out.append((line, f"{rel}:{line}: {m.group(0).strip()[:40]}: {advice}"))
    return [text for _, text in sorted(out)]


def main():
    return run_source_check(__doc__, findings_in, CHECKED, EXEMPT_PREFIXES, "{} way(s) around src/os/'s readers (tools/check-inputs.py; docs/files-and-fuzzing.md)")


if __name__ == "__main__":
    sys.exit(main())
