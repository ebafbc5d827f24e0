// POSIX (Linux): prctl for the parent-death signal, setpriority on the thread, getrusage, gethostname, execv.
#include "os/this_process.h"
#include "os/read_file.h"
#include "os/worker_location.h"
#include "rung/rung_programs.h"
#include "rung/terminal.h"

#include <dlfcn.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <fcntl.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace rung {

long this_process_id() { return static_cast<long>(::getpid()); }

bool end_with_parent(long parent) {
  // The kernel sends SIGKILL when the parent goes; a parent that went before this
  // call is seen as a different parent now.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  return static_cast<long>(::getppid()) == parent;
}

void crash_without_waiting() {}

bool process_data_limit_enforced() { return true; }

Status limit_this_process_data(std::uint64_t mib) {
  const rlim_t bytes = mib > (RLIM_INFINITY >> 20) ? RLIM_INFINITY : static_cast<rlim_t>(mib) << 20;
  const rlimit limit{bytes, bytes};
  if (::setrlimit(RLIMIT_DATA, &limit) != 0) {
    return Error{ErrorCode::kIo, fmt::format("cannot limit this process to {} MiB of data: {}", mib, std::strerror(errno))};
  }
  return {};
}  // a fatal signal ends the process, and waitpid tells the parent which

void lower_this_thread_priority() {
  ::setpriority(PRIO_PROCESS, static_cast<id_t>(::syscall(SYS_gettid)), 10);
}

bool stderr_is_terminal() { return ::isatty(STDERR_FILENO) != 0; }

double peak_resident_kib() {
  rusage usage{};
  if (::getrusage(RUSAGE_SELF, &usage) != 0) return 0;
  return static_cast<double>(usage.ru_maxrss);  // KiB on Linux
}

double this_thread_cpu_seconds() {
  timespec ts{};
  if (::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return 0;
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double this_process_cpu_seconds() {
  timespec ts{};
  if (::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0) return 0;
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double resident_high_water_kib() {
  const auto status = read_system_file("/proc/self/status");
  if (!status) return peak_resident_kib();
  const auto at = status->find("VmHWM:");
  if (at == std::string::npos) return peak_resident_kib();
  return std::strtod(status->c_str() + at + 6, nullptr);
}

void reset_resident_high_water() {
  const int fd = ::open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);
  if (fd < 0) return;
  [[maybe_unused]] const auto written = ::write(fd, "5", 1);  // 5: reset the high-water mark
  ::close(fd);
}

std::optional<double> load_average_one_minute() {
  const auto text = read_system_file("/proc/loadavg");
  if (!text) return std::nullopt;
  char* end = nullptr;
  const double one = std::strtod(text->c_str(), &end);
  if (end == text->c_str()) return std::nullopt;
  return one;
}

std::string host_name() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0 || buf[0] == '\0') return "unknown";
  return buf;
}

Status become_program(const std::filesystem::path& program, char* const* argv) {
  ::execv(program.c_str(), argv);
  return Error{ErrorCode::kLoadFailed, fmt::format("cannot run {}: {}", program.string(), std::strerror(errno))};
}

std::filesystem::path executable_dir() {
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::filesystem::path() : exe.parent_path();
}

std::filesystem::path module_dir() {
  Dl_info info{};
  // This function's own address: the file it was loaded from is rung's (librung_engine.so, or the program it is linked into).
  if (::dladdr(reinterpret_cast<const void*>(&module_dir), &info) == 0 || info.dli_fname == nullptr) return {};
  std::error_code ec;
  const auto file = std::filesystem::canonical(info.dli_fname, ec);
  return ec ? std::filesystem::path() : file.parent_path();
}

std::vector<std::string> this_process_arguments() {
  // The kernel's record of the arguments, NUL-separated (a pseudo-file: read to its end, bounded).
  const std::string raw = read_system_file("/proc/self/cmdline").value_or("");
  std::vector<std::string> args;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= raw.size(); ++i) {
    if (i < raw.size() && raw[i] != '\0') continue;
    if (i > start) args.push_back(raw.substr(start, i - start));
    start = i + 1;
  }
  return args;
}

bool may_create_files_in(const std::filesystem::path& dir) {
  std::error_code ec;
  // Search (X) as well as write: without it no name can be made in the directory.
  return std::filesystem::is_directory(dir, ec) && ::access(dir.c_str(), W_OK | X_OK) == 0;
}

}  // namespace rung
