#!/usr/bin/env python3
"""One portability seam, held by the toolchain: outside src/os/, rung's code
neither calls the operating system, nor includes its headers, nor names its
files or variables. Three checks, each on what the compiler made, so no
spelling escapes them (a macro, a quoted or capitalised header, a .inl file,
`::open`, a string put together from pieces):

  symbols   every undefined symbol of every object file outside src/os/ is C++
            (mangled), rung's own C ABI (rung_), or one of ALLOWED_SYMBOLS: ISO C's
            library but `system` (its files and printing have checks of their own:
            one way in for files, one text policy), the C++ runtime, what the
            standard library's own inline code calls (a mutex, a sleep, an atomic
            wait), the libraries rung links (SQLite, libpq, OpenSSL). A POSIX or Win32
            call is anything else (`open`, `popen`, `clock_gettime`,
            `__imp_CreateFileW`), and is a finding naming the function that
            makes it.
  includes  each translation unit preprocessed with its own compile command
            (compile_commands.json): a header entered directly from a file
            outside src/os/ is the C++ standard library's, ISO C's, one of the
            libraries' or the project's own; any other header of the system
            (<unistd.h>, <sys/stat.h>, <windows.h>, however spelled) is a finding
            naming the file and line that includes it.
  strings   the read-only data of every object outside src/os/ names no system
            file (a string starting /proc/, /sys/, /dev/ or /etc/) and no
            variable the operating system's loader or shell sets (LD_LIBRARY_PATH,
            HOME, ...): src/os/ says them.

On the mingw build (--system windows) the symbols and strings are checked: a Win32
call is an __imp_ reference to anything but the C runtime's ISO C. Its sources are
preprocessed on Linux, where code outside src/os/ is the same (tools/check-os.py
refuses an OS macro there).

  check-os-seam.py --nm NM --objdump OBJDUMP --objcopy OBJCOPY --objects OBJECTS.txt
                   [--compile-commands compile_commands.json --root DIR] [--system linux|windows]

Exit 0 when clean; 1 with one line per finding; 2 when a tool or file fails.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

from compile_commands import command_without_outputs
from object_symbols import call_sites

# (path fragment of an object or a source, why it may).
ALLOWED_PLACES = [
    ("rung_os_objects.dir/", "src/os/ is the seam"),
    ("/src/os/", "src/os/ is the seam"),
    ("conform-bare", "bench/conform-bare.cc: a backend-test runner that shares no code with rung by design (it checks "
                     "rung conform's figures): it opens ONNX Runtime itself"),
    ("sim_ep_fork", "plugins/sim-accelerator/sim_ep_fork.cpp: the simulated accelerator, a test plugin and not rung; "
                    "fork_at forks for real"),
]

ISO_C = """
memchr memcmp memcpy memmove memset strchr strrchr strcmp strncmp strlen strstr strspn strcspn strpbrk strcoll strxfrm
strtod strtof strtol strtold strtoll strtoul strtoull atoi atol atof tolower toupper isalnum isalpha isdigit isspace
isxdigit isupper islower isprint iscntrl ispunct isgraph snprintf vsnprintf sprintf vsprintf sscanf __isoc99_sscanf
malloc free calloc realloc aligned_alloc abort exit _Exit atexit at_quick_exit quick_exit getenv localeconv setlocale
strerror signal raise stdout stderr stdin fflush ferror clearerr qsort bsearch abs labs llabs div ldiv strftime
fopen fclose fread fwrite fgets fputs fputc fgetc getc putc puts putchar printf fprintf vfprintf vprintf fseek ftell
rewind feof setvbuf remove rename tmpfile __fprintf_chk __printf_chk __vfprintf_chk __vsnprintf_chk __snprintf_chk
__sprintf_chk __memcpy_chk __memmove_chk __memset_chk __strcpy_chk __fread_chk __fgets_chk
wcslen wmemcpy wmemmove wmemset wmemcmp wmemchr wcscmp mbrtowc wcrtomb btowc wctob mbsrtowcs wcsrtombs
""".split()
MATH = """
erfc erf erff erfcf exp expf expm1 exp2 log logf log10 log10f log2 log2f log1p pow powf sqrt sqrtf cbrt hypot hypotf
ldexp ldexpf frexp modf lgamma tgamma llround llroundf lround lroundf nearbyint nearbyintf rint rintf round roundf floor
floorf ceil ceilf fabs fabsf trunc truncf fmod fmodf remainder fma fmaf fmin fmax sin cos tan asin acos atan atan2 sinf
cosf tanf atan2f sinh cosh tanh tanhf asinh acosh atanh nextafter copysign
""".split()
CXX_RUNTIME = """
_GLOBAL_OFFSET_TABLE_ _Unwind_Resume __dso_handle __dynamic_cast __gxx_personality_v0 __tls_get_addr
__libc_single_threaded __stack_chk_fail __errno_location __once_proxy __popcountdi2 __udivti3 __divti3 __umodti3 __modti3
""".split()
# What libstdc++'s headers call inline (<mutex>, <condition_variable>, call_once, <stop_token>, atomic waits):
# the standard library's code compiled into rung's objects, not rung's call.
STANDARD_LIBRARY_INLINE = """
pthread_mutex_lock pthread_mutex_unlock pthread_mutex_trylock pthread_once pthread_cond_clockwait pthread_cond_wait
pthread_cond_timedwait pthread_cond_signal pthread_cond_broadcast pthread_self pthread_equal pthread_key_create
pthread_getspecific pthread_setspecific sched_yield syscall __sched_cpucount nanosleep
""".split()
ALLOWED_SYMBOLS = set(ISO_C) | set(MATH) | set(CXX_RUNTIME) | set(STANDARD_LIBRARY_INLINE)
ALLOWED_PREFIXES = ("rung_", "__cxa_", "sqlite3_", "PQ", "EVP_", "OPENSSL_", "ERR_", "SHA256", "CRYPTO_", "stbi_")
# The mingw-w64 runtime's own helpers (stack probes, its printf and strtod family, thread-local
# emulation), and the C runtime's spellings of ISO C (`_exit` for `_Exit`, `_errno` for errno).
# A Win32 call is an __imp_ reference to anything else.
WINDOWS_RUNTIME = set("""
___chkstk_ms __chkstk _setjmp longjmp __main _onexit __stack_chk_guard _assert _wassert __gxx_personality_seh0
_tls_index _CRT_MT _exit __acrt_iob_func __iob_func _errno
""".split())
WINDOWS_RUNTIME_PREFIXES = ("__mingw_", "__emutls_", ".refptr.", "__real@", "__xmm@", "__ymm@")
# Inline code of headers on mingw: libstdc++'s mutex over winpthreads, and CLI11's path validators, which
# fall back to stat() there. Code outside src/os/ cannot be Windows-only (tools/check-os.py refuses an OS
# macro there), so a call of rung's own shows on the Linux build, where these are not allowed.
WINDOWS_HEADER_INLINE = {"pthread_mutex_init", "pthread_mutex_destroy", "stat"}

SYSTEM_FILE = re.compile(r"^/(?:proc|sys|dev|etc)(?:/|$)")
SYSTEM_VARIABLES = {"LD_LIBRARY_PATH", "LD_PRELOAD", "DYLD_LIBRARY_PATH", "DYLD_FALLBACK_LIBRARY_PATH", "PATH", "HOME",
                    "USERPROFILE", "APPDATA", "LOCALAPPDATA", "TMPDIR", "TEMP", "TMP", "XDG_CACHE_HOME", "XDG_CONFIG_HOME",
                    "XDG_DATA_HOME", "XDG_RUNTIME_DIR", "SHELL", "USER", "LOGNAME"}

# Headers a file outside src/os/ may enter directly, besides the project's own and the C++ standard library's.
ISO_C_HEADERS = {"assert.h", "ctype.h", "errno.h", "fenv.h", "float.h", "inttypes.h", "limits.h", "locale.h", "math.h",
                 "setjmp.h", "signal.h", "stdarg.h", "stddef.h", "stdint.h", "stdio.h", "stdlib.h", "string.h", "time.h",
                 "wchar.h", "wctype.h", "uchar.h", "stdbool.h", "stdalign.h", "iso646.h"}
LIBRARY_HEADER_DIRS = ("nlohmann/", "fmt/", "onnx/", "google/protobuf/", "CLI/", "openssl/", "postgresql/", "gtest/",
                       "gmock/", "benchmark/", "stb/", "libpng16/")
LIBRARY_HEADERS = {"sqlite3.h", "sqlite3ext.h", "libpq-fe.h", "stb_image.h", "stb_image_write.h", "png.h", "pngconf.h",
                   "pnglibconf.h", "zlib.h", "zconf.h", "re2/re2.h", "re2/stringpiece.h"}
STANDARD_LIBRARY_DIRS = re.compile(r"/c\+\+/\d+(?:/|$)|/include/c\+\+/")


def allowed_place(path):
    return next((why for fragment, why in ALLOWED_PLACES if fragment in path), None)


def run(command):
    out = subprocess.run(command, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"check-os-seam: {' '.join(command[:3])} ...: {out.stderr.strip()[:400]}")
    return out.stdout


def symbol_allowed(symbol, system):
    if symbol.startswith("_Z") or symbol.startswith("__Z"):
        return True  # C++: the standard library's, the libraries' or rung's own
    if symbol in ALLOWED_SYMBOLS or symbol.startswith(ALLOWED_PREFIXES):
        return True
    if system == "windows":
        if symbol.startswith("__imp_"):  # a DLL's function: the C runtime's ISO C is allowed, Win32 is not
            inner = symbol[len("__imp_"):]
            return inner in ALLOWED_SYMBOLS or inner in WINDOWS_RUNTIME
        return symbol in WINDOWS_RUNTIME or symbol in WINDOWS_HEADER_INLINE or symbol.startswith(WINDOWS_RUNTIME_PREFIXES)
    return False


def symbol_findings(args, obj):
    names = [line.split()[0] for line in run([args.nm, "-u", "--format=posix", obj]).splitlines() if line.strip()]
    system_calls = sorted({n for n in names if not symbol_allowed(n, args.system)})
    out = []
    for name in system_calls:
        sites = call_sites(args.objdump, obj, [name]) if args.objdump else []
        where = f" (from {sites[0][:120]})" if sites else ""
        out.append(f"{obj}: calls {name}{where}: the system's function; call src/os/'s neutral one")
    return out


def string_findings(args, obj):
    """The object's read-only data (ELF .rodata*, PE .rdata*), split at NUL bytes."""
    with tempfile.NamedTemporaryFile(suffix=".bin") as data:
        copied = subprocess.run([args.objcopy, "-O", "binary", "--only-section=.rodata*", "--only-section=.rdata*", obj, data.name],
                                capture_output=True, text=True)
        if copied.returncode != 0:
            sys.exit(f"check-os-seam: {args.objcopy} {obj}: {copied.stderr.strip()[:300]}")
        raw = open(data.name, "rb").read()
    out = set()
    for piece in raw.split(b"\0"):
        text = piece.decode("utf-8", errors="replace")
        if SYSTEM_FILE.match(text):
            out.add(f"{obj}: names the system file {text[:80]!r}: say it in src/os/")
        elif text in SYSTEM_VARIABLES:
            out.add(f"{obj}: names the system variable {text}: say it in src/os/")
    return sorted(out)


# A character literal (skipped, so that '"' starts no string), or a string literal with its prefix; raw strings aside.
LITERAL = re.compile(r"'(?:[^'\\\n]|\\.)*'|(?:u8|u|U|L)?\"((?:[^\"\\\n]|\\.)*)\"")


def string_literals(lines):
    """The string literals of preprocessed lines, adjacent ones joined as the compiler joins them: (line, text)."""
    out, joined, start, end_pos = [], None, 0, None
    for number, text in lines:
        for m in LITERAL.finditer(text):
            if m.group(1) is None:
                continue
            piece = re.sub(r"\\(.)", r"\1", m.group(1))
            adjacent = joined is not None and end_pos is not None and end_pos[0] == number and not text[end_pos[1]:m.start()].strip()
            adjacent = adjacent or (joined is not None and end_pos is not None and end_pos[0] != number and not text[:m.start()].strip()
                                    and end_pos[2])
            if adjacent:
                joined += piece
            else:
                if joined is not None:
                    out.append((start, joined))
                joined, start = piece, number
            end_pos = (number, m.end(), not text[m.end():].strip())
    if joined is not None:
        out.append((start, joined))
    return out


def system_name(text):
    if SYSTEM_FILE.match(text):
        return f"the system file {text[:80]!r}"
    if text in SYSTEM_VARIABLES:
        return f"the system variable {text}"
    return None


def header_allowed(header, root, extra_dirs):
    real = os.path.realpath(header)
    if real.startswith(root + os.sep) or any(real.startswith(d) for d in extra_dirs):
        return True
    if STANDARD_LIBRARY_DIRS.search(header) or STANDARD_LIBRARY_DIRS.search(real):
        return True
    # Longest first, so a multiarch header's name is taken relative to its own directory.
    for base in sorted(("/usr/include/", "/usr/local/include/", "/usr/include/x86_64-linux-gnu/", "/usr/include/aarch64-linux-gnu/",
                        "/usr/x86_64-w64-mingw32/include/", "/usr/share/mingw-w64/include/"), key=len, reverse=True):
        if header.startswith(base):
            rel = header[len(base):]
            break
    else:
        rel = os.path.basename(header)
    if rel in ISO_C_HEADERS or rel in LIBRARY_HEADERS or rel.startswith(LIBRARY_HEADER_DIRS):
        return True
    # Compiler-provided headers (stddef.h, stdarg.h, the intrinsics) live under the compiler's own directory.
    return "/lib/gcc/" in real and os.path.basename(rel) in ISO_C_HEADERS | {"stdint-gcc.h", "float.h"}


def preprocess_command(entry):
    return command_without_outputs(entry) + ["-E", "-o", "-"]


def include_findings(entry, root, extra_dirs):
    """Headers entered directly from a file outside src/os/, read from the preprocessor's line markers."""
    result = subprocess.run(preprocess_command(entry), capture_output=True, text=True, cwd=entry["directory"], errors="replace")
    if result.returncode != 0:
        return [f"{entry['file']}: does not preprocess: {result.stderr.strip()[:300]}"]
    stack, out = [], []
    line_of = {}  # the line number the next line of each open file will have
    code_of = {}  # a project file outside src/os/ -> [(line number, text)] as the preprocessor gave them
    marker = re.compile(r'^# (\d+) "((?:[^"\\]|\\.)*)"((?: \d)*)$')
    for line in result.stdout.splitlines():
        m = marker.match(line)
        if not m:
            if stack:
                current = stack[-1]
                if current.startswith(root + os.sep) and not allowed_place(current) and '"' in line:
                    code_of.setdefault(current, []).append((line_of.get(current, 1), line))
                line_of[current] = line_of.get(current, 1) + 1
            continue
        number, name, flags = int(m.group(1)), m.group(2), m.group(3).split()
        if "1" in flags and stack:  # `name` entered from the file on top of the stack, at its current line
            includer = stack[-1]
            if includer.startswith(root + os.sep) and not allowed_place(includer) and not header_allowed(name, root, extra_dirs):
                out.append(f"{os.path.relpath(includer, root)}:{line_of.get(includer, 1)}: includes {name}: "
                           "an operating system's header; its calls belong in src/os/")
            stack.append(name)
        elif "2" in flags:  # back in `name`
            while stack and stack[-1] != name:
                stack.pop()
            if not stack:
                stack.append(name)
        elif not stack or stack[-1] != name:
            stack.append(name) if not stack else stack.__setitem__(-1, name)
        line_of[name] = number
    for path, lines in code_of.items():
        for number, literal in string_literals(lines):
            what = system_name(literal)
            if what:
                out.append(f"{os.path.relpath(path, root)}:{number}: names {what}: say it in src/os/")
    return sorted(set(out))


def main():
    ap = argparse.ArgumentParser(prog="check-os-seam", description=__doc__.splitlines()[0])
    ap.add_argument("--nm", required=True)
    ap.add_argument("--objdump")
    ap.add_argument("--objcopy", help="reads each object's read-only data (the strings check)")
    ap.add_argument("--objects", required=True, help="the object files of rung's programs and libraries, one a line")
    ap.add_argument("--compile-commands", help="compile_commands.json: each translation unit is preprocessed")
    ap.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
    ap.add_argument("--library-headers", action="append", default=[], help="another directory of a library's headers")
    ap.add_argument("--system", choices=["linux", "windows"], default="linux")
    ap.add_argument("--sources-under", action="append", default=[],
                    help="preprocess only the translation units under this path (relative to --root)")
    ap.add_argument("--planted", action="store_true",
                    help="the objects and units are planted bypasses: pass only when every one of them is found")
    args = ap.parse_args()
    root = os.path.realpath(args.root)

    objects = [line.strip() for line in open(args.objects) if line.strip()]
    if not objects:
        sys.exit("check-os-seam: no objects listed")
    findings, checked = [], 0
    for obj in objects:
        if allowed_place(obj):
            continue
        checked += 1
        findings += symbol_findings(args, obj)
        if args.objcopy:
            findings += string_findings(args, obj)
    units = 0
    planted_files = []
    if args.compile_commands:
        extra = [os.path.realpath(d) + os.sep for d in args.library_headers]
        for entry in json.load(open(args.compile_commands)):
            source = os.path.realpath(os.path.join(entry["directory"], entry["file"]))
            rel = os.path.relpath(source, root)
            if args.sources_under:
                if not rel.startswith(tuple(args.sources_under)):
                    continue
            elif rel.startswith(("tests/", "fuzz/", "..")) or allowed_place(source):
                continue
            units += 1
            planted_files.append(rel)
            findings += include_findings(entry, root, extra)
    findings = sorted(set(findings), key=findings.index)
    if args.planted:
        planted = sorted({os.path.basename(o).split(".")[0] for o in objects} | {os.path.basename(f).split(".")[0] for f in planted_files})
        missed = [p for p in planted if not any(p + "." in f for f in findings)]
        for f in findings:
            print(f"found {f}")
        for p in missed:
            print(f"MISSED {p}: a planted bypass the check did not find")
        if missed or not planted:
            return 1
        print(f"PASS: each of {len(planted)} planted bypasses is found")
        return 0
    for f in findings:
        print(f"FAIL {f}")
    if findings:
        print(f"{len(findings)} use(s) of the operating system outside src/os/ (tools/check-os-seam.py; docs/code-map.md)")
        return 1
    print(f"PASS: {checked} objects call, and {units} translation units include, nothing of the system outside src/os/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
