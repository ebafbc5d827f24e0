// Windows: CreateProcessW with stdin from NUL and stdout and stderr in the log,
// inheriting those handles alone; the child starts suspended and is put in a Job
// Object set to kill on close before it runs a single instruction, so it, and
// whatever it starts, ends when this process ends, however it ends (the
// counterpart of Linux's parent-death signal). Deadlines by waiting on the
// process handle; an exception code (0xC0000005, ...) is the child's crash.
#include <windows.h>

#include <fmt/format.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "os/child_environment.h"
#include "os/child_process.h"
#include "os/windows/handle.h"
#include "os/windows/text.h"

namespace rung {
namespace {

// What kill() ends a process with: the code a console's Ctrl+Break gives, so it
// reads as killed, not as an exit of the child's own.
constexpr UINT kKilledCode = 0xC000013A;

// One argument as the C runtime's parser (CommandLineToArgvW's rules) reads it
// back: quoted when it must be, backslashes doubled only before a quote.
std::wstring quoted(const std::wstring& arg) {
  if (!arg.empty() && arg.find_first_of(L" \t\n\v\"") == std::wstring::npos) return arg;
  std::wstring out = L"\"";
  for (std::size_t i = 0;; ++i) {
    std::size_t backslashes = 0;
    while (i < arg.size() && arg[i] == L'\\') {
      ++i;
      ++backslashes;
    }
    if (i == arg.size()) {
      out.append(backslashes * 2, L'\\');
      break;
    }
    if (arg[i] == L'"') {
      out.append(backslashes * 2 + 1, L'\\');
    } else {
      out.append(backslashes, L'\\');
    }
    out += arg[i];
  }
  return out + L"\"";
}

// The environment as CreateProcessW takes it: UTF-16 "NAME=value" strings, each
// ended by a NUL, the block by another.
std::wstring environment_block() {
  std::wstring block;
  const ChildEnvironment environment;  // named: a temporary's entries() would dangle in the loop
  for (const auto& entry : environment.entries()) {
    block += wide_of(entry);
    block += L'\0';
  }
  block += L'\0';
  return block;
}

Error program_failed(const std::filesystem::path& program, const char* what, DWORD code = GetLastError()) {
  const bool missing = code == ERROR_FILE_NOT_FOUND || code == ERROR_PATH_NOT_FOUND;
  return Error{missing ? ErrorCode::kNotFound : ErrorCode::kIo,
               fmt::format("{}: {}: {}", utf8_of(program.wstring()), what, windows_error_text(code))};
}

}  // namespace

std::string signal_name(int signal) {
  switch (static_cast<DWORD>(signal)) {
    case 0xC0000005: return "EXCEPTION_ACCESS_VIOLATION";
    case 0xC000001D: return "EXCEPTION_ILLEGAL_INSTRUCTION";
    case 0xC0000094: return "EXCEPTION_INT_DIVIDE_BY_ZERO";
    case 0xC00000FD: return "EXCEPTION_STACK_OVERFLOW";
    case 0xC0000409: return "STATUS_STACK_BUFFER_OVERRUN";  // __fastfail, and abort() in the UCRT
    case 0xC000013A: return "STATUS_CONTROL_C_EXIT";
    case 0x80000003: return "EXCEPTION_BREAKPOINT";
  }
  return fmt::format("exception 0x{:08X}", static_cast<DWORD>(signal));
}

Result<ChildProcess> ChildProcess::spawn(const std::filesystem::path& program, const std::vector<std::string>& args,
                                         const std::filesystem::path& log_file, int pass_fd, int as_fd) {
  // An inherited handle keeps its value in the child: it cannot be given another number.
  if (pass_fd != -1 && as_fd != pass_fd) {
    return Error{ErrorCode::kInvalidArgument,
                 fmt::format("{}: a handle handed to a child keeps its value on Windows ({}, not {})", utf8_of(program.wstring()), pass_fd, as_fd)};
  }
  SECURITY_ATTRIBUTES inherited{sizeof(SECURITY_ATTRIBUTES), nullptr, TRUE};
  OwnedHandle input{CreateFileW(L"NUL", GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE, &inherited, OPEN_EXISTING, 0, nullptr)};
  if (!input.ok()) return program_failed(program, "opening NUL for its input");
  OwnedHandle log{CreateFileW(log_file.c_str(), GENERIC_WRITE, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, &inherited, CREATE_ALWAYS,
                        FILE_ATTRIBUTE_NORMAL, nullptr)};
  if (!log.ok()) return program_failed(log_file, "creating its log");

  // Only these handles are inherited: nothing else this process holds leaks into the
  // child, and another thread's child never gets the handed end (each names its own list).
  std::vector<HANDLE> handed{input.h, log.h};
  const HANDLE passed = pass_fd != -1 ? handle_of(pass_fd) : nullptr;
  if (passed != nullptr) {
    if (!SetHandleInformation(passed, HANDLE_FLAG_INHERIT, HANDLE_FLAG_INHERIT)) return program_failed(program, "handing it its channel");
    handed.push_back(passed);
  }
  struct Uninherit {
    HANDLE h;
    ~Uninherit() {
      if (h != nullptr) SetHandleInformation(h, HANDLE_FLAG_INHERIT, 0);
    }
  } uninherit{passed};
  SIZE_T size = 0;
  InitializeProcThreadAttributeList(nullptr, 1, 0, &size);
  std::vector<unsigned char> storage(size);
  auto* attributes = reinterpret_cast<LPPROC_THREAD_ATTRIBUTE_LIST>(storage.data());
  if (!InitializeProcThreadAttributeList(attributes, 1, 0, &size)) return program_failed(program, "preparing its start");
  struct ListDeleter {
    LPPROC_THREAD_ATTRIBUTE_LIST list;
    ~ListDeleter() { DeleteProcThreadAttributeList(list); }
  } delete_list{attributes};
  if (!UpdateProcThreadAttribute(attributes, 0, PROC_THREAD_ATTRIBUTE_HANDLE_LIST, handed.data(), handed.size() * sizeof(HANDLE), nullptr, nullptr)) {
    return program_failed(program, "naming the handles it inherits");
  }
  STARTUPINFOEXW startup{};
  startup.StartupInfo.cb = sizeof startup;
  startup.StartupInfo.dwFlags = STARTF_USESTDHANDLES;
  startup.StartupInfo.hStdInput = input.h;
  startup.StartupInfo.hStdOutput = log.h;
  startup.StartupInfo.hStdError = log.h;
  startup.lpAttributeList = attributes;

  OwnedHandle job{CreateJobObjectW(nullptr, nullptr)};
  if (!job.ok()) return program_failed(program, "creating its Job Object");
  JOBOBJECT_EXTENDED_LIMIT_INFORMATION limits{};
  limits.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
  if (!SetInformationJobObject(job.h, JobObjectExtendedLimitInformation, &limits, sizeof limits)) {
    return program_failed(program, "setting its Job Object to kill on close");
  }

  std::wstring command = quoted(program.wstring());
  for (const auto& a : args) command += L" " + quoted(wide_of(a));
  std::wstring environment = environment_block();
  PROCESS_INFORMATION started{};
  const auto start = Clock::now();
  // The program by its path (lpApplicationName): never a search of the current directory or PATH.
  if (!CreateProcessW(program.c_str(), command.data(), nullptr, nullptr, TRUE,
                      CREATE_SUSPENDED | CREATE_UNICODE_ENVIRONMENT | EXTENDED_STARTUPINFO_PRESENT | CREATE_NO_WINDOW, environment.data(), nullptr,
                      &startup.StartupInfo, &started)) {
    return program_failed(program, "starting it");
  }
  OwnedHandle process{started.hProcess}, thread{started.hThread};
  if (!AssignProcessToJobObject(job.h, process.h)) {
    Error e = program_failed(program, "putting it in its Job Object");
    TerminateProcess(process.h, kKilledCode);
    WaitForSingleObject(process.h, INFINITE);
    return e;
  }
  ResumeThread(thread.h);
  return ChildProcess(static_cast<long>(started.dwProcessId), start, bits_of(process.release()), bits_of(job.release()));
}

ChildProcess::~ChildProcess() {
  (void)kill();
  if (job_ != kNoHandle) CloseHandle(handle_of(job_));  // kills anything the child left running
}

ChildExit ChildProcess::reaped(int status, bool timed_out) {
  pid_ = -1;
  CloseHandle(handle_of(process_));
  process_ = kNoHandle;
  exit_.timed_out = timed_out;
  exit_.elapsed_ms = std::chrono::duration<double, std::milli>(Clock::now() - start_).count();
  if (!timed_out) {
    const auto code = static_cast<DWORD>(status);
    // NTSTATUS error codes (0xC...) end a process that crashed; anything else is its own exit code.
    if ((code & 0xC0000000u) == 0xC0000000u) {
      exit_.signal = status;
    } else {
      exit_.exit_code = status;
    }
  }
  return exit_;
}

namespace {

int exit_status(HANDLE process) {
  DWORD code = 0;
  GetExitCodeProcess(process, &code);
  return static_cast<int>(code);
}

}  // namespace

ChildExit ChildProcess::wait(Clock::time_point until, const std::function<void()>& on_wait, std::chrono::milliseconds every) {
  auto next_call = Clock::now() + every;
  while (pid_ != -1) {
    const auto now = Clock::now();
    if (now >= until) {
      TerminateProcess(handle_of(process_), kKilledCode);
      WaitForSingleObject(handle_of(process_), INFINITE);
      return reaped(exit_status(handle_of(process_)), true);
    }
    if (on_wait && now >= next_call) {
      on_wait();
      next_call = Clock::now() + every;
    }
    const auto wake = on_wait ? std::min(until, next_call) : until;
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(wake - Clock::now()).count();
    const DWORD timeout = ms <= 0 ? 0 : ms > 1000 ? 1000 : static_cast<DWORD>(ms);
    if (WaitForSingleObject(handle_of(process_), timeout) == WAIT_OBJECT_0) return reaped(exit_status(handle_of(process_)), false);
  }
  return exit_;
}

ChildExit ChildProcess::kill() {
  if (pid_ == -1) return exit_;
  if (WaitForSingleObject(handle_of(process_), 0) != WAIT_OBJECT_0) {
    TerminateProcess(handle_of(process_), kKilledCode);
    WaitForSingleObject(handle_of(process_), INFINITE);
  }
  return reaped(exit_status(handle_of(process_)), false);
}

}  // namespace rung
