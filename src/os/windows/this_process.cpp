// Windows: the parent watched by a thread of this process (the counterpart of
// Linux's parent-death signal; a worker's parent also puts it in a Job Object
// that ends it), the thread's priority, the peak working set, the DNS host name.
#include <windows.h>
#include <shellapi.h>
#include <psapi.h>

#include <fmt/format.h>

#include <csignal>
#include <string>
#include <thread>

#include "os/this_process.h"
#include "os/worker_location.h"
#include "os/windows/handle.h"
#include "os/windows/text.h"
#include "rung/terminal.h"

namespace rung {

long this_process_id() { return static_cast<long>(GetCurrentProcessId()); }

bool process_data_limit_enforced() { return false; }  // a job object's limit is not wired yet

Status limit_this_process_data(std::uint64_t mib) {
  return Error{ErrorCode::kUnsupported, fmt::format("a worker's memory limit ({} MiB) is not enforced on Windows yet", mib)};
}

void crash_without_waiting() {
  SetErrorMode(SEM_FAILCRITICALERRORS | SEM_NOGPFAULTERRORBOX | SEM_NOOPENFILEERRORBOX);
  // Handling it here ends the process with the exception's code (0xC0000005), which ChildProcess names.
  SetUnhandledExceptionFilter([](EXCEPTION_POINTERS*) -> LONG { return EXCEPTION_EXECUTE_HANDLER; });
  // abort() in the UCRT ends a process by __fastfail (0xC0000409); in msvcrt, which
  // mingw-built code uses, it exits with status 3, which any program may return. So
  // an abort ends this process as the UCRT's does, and reads as the crash it is.
  std::signal(SIGABRT, [](int) { TerminateProcess(GetCurrentProcess(), 0xC0000409); });
}

bool end_with_parent(long parent) {
  if (parent <= 0) return false;
  HANDLE process = OpenProcess(SYNCHRONIZE | PROCESS_QUERY_LIMITED_INFORMATION, FALSE, static_cast<DWORD>(parent));
  if (process == nullptr) return false;  // gone already
  // A process id is reused once its process is gone: one that began after this
  // process did cannot be its parent, so the parent went before this call.
  const std::uint64_t parent_began = creation_of(process);
  const std::uint64_t this_began = creation_of(GetCurrentProcess());
  if (WaitForSingleObject(process, 0) == WAIT_OBJECT_0 || (parent_began != 0 && this_began != 0 && parent_began > this_began)) {
    CloseHandle(process);
    return false;
  }
  // Ended as a kill ends it: no handlers, no flushing, as SIGKILL does on Linux.
  std::thread([process] {
    WaitForSingleObject(process, INFINITE);
    TerminateProcess(GetCurrentProcess(), 1);
  }).detach();
  return true;
}

void lower_this_thread_priority() { SetThreadPriority(GetCurrentThread(), THREAD_PRIORITY_BELOW_NORMAL); }

bool stderr_is_terminal() {
  HANDLE err = GetStdHandle(STD_ERROR_HANDLE);
  DWORD mode = 0;
  return err != nullptr && err != INVALID_HANDLE_VALUE && GetFileType(err) == FILE_TYPE_CHAR && GetConsoleMode(err, &mode);
}

double peak_resident_kib() {
  PROCESS_MEMORY_COUNTERS counters{};
  counters.cb = sizeof counters;
  if (!GetProcessMemoryInfo(GetCurrentProcess(), &counters, sizeof counters)) return 0;
  return static_cast<double>(counters.PeakWorkingSetSize) / 1024.0;
}

double this_thread_cpu_seconds() {
  FILETIME created, exited, kernel, user;
  if (!GetThreadTimes(GetCurrentThread(), &created, &exited, &kernel, &user)) return 0;
  const auto ticks = [](const FILETIME& t) { return (static_cast<unsigned long long>(t.dwHighDateTime) << 32) | t.dwLowDateTime; };
  return static_cast<double>(ticks(kernel) + ticks(user)) * 1e-7;  // 100 ns units
}

double this_process_cpu_seconds() {
  FILETIME created, exited, kernel, user;
  if (!GetProcessTimes(GetCurrentProcess(), &created, &exited, &kernel, &user)) return 0;
  const auto ticks = [](const FILETIME& t) { return (static_cast<unsigned long long>(t.dwHighDateTime) << 32) | t.dwLowDateTime; };
  return static_cast<double>(ticks(kernel) + ticks(user)) * 1e-7;  // 100 ns units
}

double resident_high_water_kib() { return peak_resident_kib(); }
void reset_resident_high_water() {}
std::optional<double> load_average_one_minute() { return std::nullopt; }

std::string host_name() {
  wchar_t name[256];
  DWORD size = sizeof name / sizeof name[0];
  if (!GetComputerNameExW(ComputerNameDnsHostname, name, &size) || size == 0) return "unknown";
  return utf8_of(std::wstring(name, size));
}

namespace {

// The directory of a module's file (nullptr: the program's), its name grown until it fits (long paths).
std::filesystem::path directory_of_module(HMODULE module) {
  std::wstring path(MAX_PATH, L'\0');
  for (;;) {
    const DWORD n = GetModuleFileNameW(module, path.data(), static_cast<DWORD>(path.size()));
    if (n == 0) return {};
    if (n < path.size()) return std::filesystem::path(path.substr(0, n)).parent_path();
    path.resize(path.size() * 2);
  }
}

}  // namespace

std::filesystem::path executable_dir() { return directory_of_module(nullptr); }

std::filesystem::path module_dir() {
  HMODULE module = nullptr;
  // This function's own address: the DLL (or program) rung's code was loaded from.
  if (!GetModuleHandleExW(GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS | GET_MODULE_HANDLE_EX_FLAG_UNCHANGED_REFCOUNT,
                          reinterpret_cast<LPCWSTR>(&module_dir), &module)) {
    return {};
  }
  return directory_of_module(module);
}

std::vector<std::string> this_process_arguments() {
  std::vector<std::string> args;
  int count = 0;
  // Split by the C runtime's rules, as the program's own argv was.
  wchar_t** argv = CommandLineToArgvW(GetCommandLineW(), &count);
  if (argv == nullptr) return args;
  for (int i = 0; i < count; ++i) args.push_back(utf8_of(argv[i]));
  LocalFree(argv);
  return args;
}

bool may_create_files_in(const std::filesystem::path& dir) {
  // The read-only attribute on a directory does not stop files being made in it
  // (Explorer uses it for folder views); the directory's ACL does, so ask for the
  // right to add a file through a handle, as CreateFileW would be refused.
  HANDLE h = CreateFileW(dir.c_str(), FILE_ADD_FILE, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, nullptr, OPEN_EXISTING,
                         FILE_FLAG_BACKUP_SEMANTICS, nullptr);
  if (h == INVALID_HANDLE_VALUE) return false;
  FILE_BASIC_INFO info{};
  const bool directory = GetFileInformationByHandleEx(h, FileBasicInfo, &info, sizeof info) && (info.FileAttributes & FILE_ATTRIBUTE_DIRECTORY) != 0;
  CloseHandle(h);
  return directory;
}

}  // namespace rung
