#!/usr/bin/env python3
"""One portability seam: src/os/ is the only place that names an operating
system. This check fails, naming file:line, on any of these outside src/os/:
an operating system's header (<unistd.h>, <sys/...>, <dlfcn.h>, <windows.h>, ...),
a macro that names one (_WIN32, __linux__, __APPLE__, __ANDROID__, ...), a call
to a POSIX or Win32 function (getpid, prctl, setpriority, isatty, dlopen,
socketpair, LoadLibraryW, ...), one of their types (pid_t, sigset_t,
HANDLE, ...), or a shared library's file name in a string ("libQnnHtp.so",
".dll": os/library_files.h names them from a stem). A port to another system
then changes src/os/ alone.

tests/ and fuzz/ may call the system as they like (a test kills a real
process); anything else that must is in ALLOWED below with its reason.
Comments are ignored, and string literals but for library file names.

  tools/check-os.py [--root DIR]     exit 0 when clean, 1 with one line per finding
"""
import re
import sys

from source_text import line_finder, run_source_check, strip_comments

CHECKED = ["src", "cli", "worker", "examples", "plugins", "include", "bench"]
EXEMPT_PREFIXES = ["src/os/", "tests/", "fuzz/"]

# (path or folder prefix, finding kind, why it may).
ALLOWED = [
    ("include/rung/rung.h", "OS macro",
     "the C ABI's export macro: a C compiler building against rung.h on Windows needs __declspec(dllimport)"),
    ("bench/conform-bare.cc", "OS header",
     "a backend-test runner that shares no code with rung by design (it checks rung conform's figures): it opens ONNX Runtime itself"),
    ("bench/conform-bare.cc", "OS call", "as above: dlopen and dlsym of its own, not rung's loader"),
    ("bench/conform-bare.cc", "library file name", "as above: it finds ONNX Runtime's file itself"),
    ("plugins/sim-accelerator/sim_ep_fork.cpp", "OS macro", "the simulated accelerator, a test plugin and not rung: fork_at forks for real, where there is fork"),
    ("plugins/sim-accelerator/sim_ep_fork.cpp", "OS header", "as above"),
    ("plugins/sim-accelerator/sim_ep_fork.cpp", "OS call", "as above: a provider that leaves a process behind, which only fork(2) makes"),
    ("plugins/sim-accelerator/sim_ep_fork.cpp", "OS type", "as above"),
    ("src/runtime/clean_error.cpp", "library file name",
     "a pattern over the messages ONNX Runtime and the Linux loader write, which name .so files"),
]

# Between <> or "" and in any case: Windows' file system finds <Windows.h> and "winsock2.h" alike.
OS_HEADERS = re.compile(
    r"^[ \t]*#[ \t]*include[ \t]*[<\"](?P<h>"
    r"(?:sys|netinet|arpa|linux|asm|mach|mach-o|android)/[\w./]+"
    r"|(?:unistd|fcntl|dlfcn|signal|poll|pthread|sched|termios|pwd|grp|spawn|elf|link|dirent|netdb|syslog|libgen"
    r"|glob|fnmatch|semaphore|ucontext|execinfo|malloc|alloca|endian|byteswap|features|err|paths|utmp|wordexp"
    r"|windows|winsock2|ws2tcpip|io|direct|process|bcrypt|dxgi|dxgi1_\d|d3d12|shlobj|knownfolders|aclapi|sddl"
    r"|winternl|libloaderapi|processthreadsapi|synchapi|fileapi|handleapi|tlhelp32|psapi|winbase|winnt|wincrypt"
    r"|ntstatus|shellapi|objbase|combaseapi)\.h)[>\"]",
    re.M | re.I)

OS_MACROS = re.compile(r"\b(?:_WIN32|_WIN64|__WIN32__|WIN32|_WINDOWS|__CYGWIN__|__MINGW32__|__MINGW64__|__MSYS__|__linux__|__linux"
                       r"|__gnu_linux__|__gnu_hurd__|__APPLE__|__MACH__|TARGET_OS_\w+|__ANDROID__|__BIONIC__|__unix__|__unix"
                       r"|__FreeBSD__|__NetBSD__|__OpenBSD__|__DragonFly__|__sun|_AIX|__hpux|__QNX__|__QNXNTO__|__HAIKU__"
                       r"|__Fuchsia__|__EMSCRIPTEN__)\b")

OS_FUNCTIONS = sorted(set("""
getpid getppid gettid fork vfork execv execve execvp execvpe execl execlp waitpid waitid wait3 wait4 kill killpg
pipe2 dup2 dup3 socketpair poll ppoll epoll_create epoll_create1 epoll_wait
pselect prctl setpriority getpriority sched_getaffinity sched_setaffinity sched_yield getrusage uname
access faccessat euidaccess eaccess isatty ttyname gethostname sethostname sysconf pathconf dlopen dlsym dlclose dlerror dladdr dlinfo flock lockf fcntl
ioctl munmap mprotect madvise posix_spawn posix_spawnp pthread_sigmask pthread_kill pthread_setname_np sigprocmask
sigaction sigemptyset sigfillset sigaddset sigdelset sigwait sigwaitinfo getuid geteuid getgid getegid setuid setgid
chown fchown lchown fchmod lstat fstat fstatat statx readlink readlinkat symlink unlink unlinkat fsync fdatasync
ftruncate truncate pread pwrite readv writev usleep nanosleep alarm syscall mkfifo mknod mkdtemp mkstemp getrlimit
setrlimit setsid setpgid getpgid tcgetattr tcsetattr getpwuid getpwnam getgrgid inotify_init inotify_add_watch
LoadLibraryA LoadLibraryW LoadLibraryExA LoadLibraryExW GetProcAddress FreeLibrary GetModuleHandleW GetModuleFileNameW
CreateProcessW CreateProcessA CreateJobObjectW AssignProcessToJobObject TerminateProcess WaitForSingleObject
WaitForMultipleObjects CloseHandle CreateFileW CreateFileA ReadFile WriteFile FlushFileBuffers MoveFileExW MoveFileExA
LockFileEx UnlockFileEx GetLastError SetLastError GetCurrentProcessId GetCurrentThreadId SetThreadPriority
GetEnvironmentVariableW SHGetKnownFolderPath BCryptOpenAlgorithmProvider BCryptHashData CreateDXGIFactory1
""".split()))
OS_CALL = re.compile(r"\b(?P<f>" + "|".join(OS_FUNCTIONS) + r")\s*\(")
OS_TYPES = re.compile(r"\b(?:pid_t|mode_t|sigset_t|ssize_t|uid_t|gid_t|off64_t|siginfo_t|pthread_t|rusage|utsname|pollfd"
                      r"|HANDLE|HMODULE|HINSTANCE|DWORD|LPCWSTR|LPWSTR|HRESULT|SECURITY_ATTRIBUTES)\b")

# A string naming a shared library by its system's suffix: "libx.so", "libx.so.1", "x.dll", ".dylib".
LIBRARY_NAME = re.compile(r'"(?:[^"\\\n]|\\.)*?[\w*]*\.(?:so|dll|dylib)\b(?:[^"\\\n]|\\.)*"')

# A call's name preceded by one of these words is still a call (return getpid();).
CALL_KEYWORDS = {"return", "co_return", "throw", "else", "case", "do", "co_await", "co_yield"}


def allowed(rel, kind):
    return any(kind == k and (rel == where or (where.endswith("/") and rel.startswith(where))) for where, k, _ in ALLOWED)


def is_call(code, start):
    """True when the name at `start` is called as the system's function: not a
    member (x.kill(), p->poll()), not a name qualified by a class or namespace
    (ChildProcess::kill, std::signal), not a declaration of one of rung's own
    (ChildExit kill();)."""
    i = start - 1
    while i >= 0 and code[i] in " \t\n":
        i -= 1
    if i < 0:
        return True
    if code[i] == "." or code[i - 1:i + 1] == "->":
        return False
    if code[i - 1:i + 1] == "::":
        j = i - 2
        while j >= 0 and code[j] in " \t\n":
            j -= 1
        return j < 0 or not (code[j].isalnum() or code[j] in "_>")  # ::getpid() is the global one
    if code[i].isalnum() or code[i] == "_":
        j = i
        while j >= 0 and (code[j].isalnum() or code[j] == "_"):
            j -= 1
        return code[j + 1:i + 1] in CALL_KEYWORDS
    return code[i] not in "&*~"  # a declarator (int *poll(...)) or a destructor name


def findings_in(rel, text):
    code = strip_comments(text)
    line_of = line_finder(code)

    out = []
    # Preprocessor lines blanked for calls and types (#include <signal.h> is the header's finding).
    no_directives = re.sub(r"(?m)^[ \t]*#.*$", lambda m: " " * len(m.group(0)), code)
    checks = [
        ("OS header", OS_HEADERS, strip_comments(text, keep_strings=True),
         lambda m: f"<{m.group('h')}>: an operating system's header; its calls belong in src/os/"),
        ("OS macro", OS_MACROS, code, lambda m: f"{m.group(0)}: names an operating system; only src/os/ may tell them apart"),
        ("OS call", OS_CALL, no_directives, lambda m: f"{m.group('f')}(): the system's function; call src/os/'s neutral one"),
        ("OS type", OS_TYPES, no_directives, lambda m: f"{m.group(0)}: the system's type; src/os/'s headers speak neutral ones"),
        ("library file name", LIBRARY_NAME, re.sub(r"(?m)^[ \t]*#[ \t]*include.*$", lambda m: " " * len(m.group(0)), strip_comments(text, keep_strings=True)),
         lambda m: f"{m.group(0)[:60]}: a library's file name; say its stem to os/library_files.h"),
    ]
    for kind, pattern, where, say in checks:
        if allowed(rel, kind):
            continue
        seen = set()
        line_in = line_of if where is code else line_finder(where)
        for m in pattern.finditer(where):
            if kind == "OS call" and not is_call(where, m.start()):
                continue
            if kind == "OS type" and where[:m.start()].rstrip().endswith("::"):
                continue  # another's name (onnx::TensorProto::BOOL, Foo::HANDLE)
            line = line_in(m.start())
            if (kind, line) in seen:
                continue
            seen.add((kind, line))
            out.append((line, f"{rel}:{line}: {say(m)}"))
    return [t for _, t in sorted(out)]


def main():
    return run_source_check(__doc__, findings_in, CHECKED, EXEMPT_PREFIXES, "{} use(s) of the operating system outside src/os/ (tools/check-os.py; docs/code-map.md)")


if __name__ == "__main__":
    sys.exit(main())
