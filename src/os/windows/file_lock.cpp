// Windows: LockFileEx on a file opened without following a reparse point, whose
// owner must be this process's user; the holder is named by its image path.
#include <windows.h>
#include <aclapi.h>

#include <fmt/format.h>

#include <charconv>
#include <string>

#include "os/file_lock.h"
#include "os/lock_file_system.h"
#include "os/windows/handle.h"
#include "os/windows/security.h"
#include "os/windows/text.h"

namespace rung {
namespace {

namespace fs = std::filesystem;

// Windows keeps others from reading a locked range, and the holder's id is read
// by whoever waits: the lock is taken on one byte far past it (a lock may lie
// beyond the end of a file).
constexpr DWORD kLockedOffsetHigh = 1;  // the byte at 4 GiB

Error io_error(const fs::path& file, const std::string& why) { return Error{ErrorCode::kIo, fmt::format("{}: {}", file.string(), why)}; }

}  // namespace

std::string describe_process(long pid) {
  if (pid <= 0) return "an unknown process";
  std::string image;
  if (HANDLE p = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, FALSE, static_cast<DWORD>(pid)); p != nullptr) {
    wchar_t path[MAX_PATH * 4];
    DWORD size = sizeof path / sizeof path[0];
    if (QueryFullProcessImageNameW(p, 0, path, &size)) image = utf8_of(std::wstring(path, size));
    CloseHandle(p);
  }
  if (image.size() > 160) image = image.substr(0, 160) + "…";
  return image.empty() ? fmt::format("process {}", pid) : fmt::format("process {} ({})", pid, image);
}

namespace lock_file {

Result<std::intptr_t> open(const fs::path& file) {
  // FILE_FLAG_OPEN_REPARSE_POINT: a link planted under the lock's name is opened
  // itself (and refused below), never followed to another file.
  HANDLE h = CreateFileW(file.c_str(), GENERIC_READ | GENERIC_WRITE, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, nullptr,
                         OPEN_ALWAYS, FILE_ATTRIBUTE_NORMAL | FILE_FLAG_OPEN_REPARSE_POINT | FILE_FLAG_BACKUP_SEMANTICS, nullptr);
  if (h == INVALID_HANDLE_VALUE) return io_error(file, windows_error_text(GetLastError()));
  BY_HANDLE_FILE_INFORMATION info{};
  if (!GetFileInformationByHandle(h, &info) || (info.dwFileAttributes & (FILE_ATTRIBUTE_DIRECTORY | FILE_ATTRIBUTE_REPARSE_POINT)) != 0 ||
      !owned_by_this_user(h)) {
    CloseHandle(h);
    return io_error(file, "is not a regular file of this user's; remove it");
  }
  return bits_of(h);
}

Result<bool> try_take(std::intptr_t handle, const fs::path& file) {
  OVERLAPPED at{};
  at.OffsetHigh = kLockedOffsetHigh;
  if (LockFileEx(handle_of(handle), LOCKFILE_EXCLUSIVE_LOCK | LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, &at)) return true;
  const DWORD code = GetLastError();
  if (code == ERROR_LOCK_VIOLATION || code == ERROR_IO_PENDING) return false;
  return io_error(file, windows_error_text(code));
}

long holder(std::intptr_t handle) {
  char buf[32] = {};
  OVERLAPPED at{};  // offset 0
  DWORD n = 0;
  if (!ReadFile(handle_of(handle), buf, sizeof buf - 1, &n, &at)) return 0;
  long pid = 0;
  if (n > 0) std::from_chars(buf, buf + n, pid);
  return pid > 0 ? pid : 0;
}

void write_holder(std::intptr_t handle) {
  const std::string pid = std::to_string(GetCurrentProcessId()) + "\n";
  LARGE_INTEGER zero{};
  if (!SetFilePointerEx(handle_of(handle), zero, nullptr, FILE_BEGIN) || !SetEndOfFile(handle_of(handle))) return;
  OVERLAPPED at{};
  DWORD wrote = 0;
  WriteFile(handle_of(handle), pid.data(), static_cast<DWORD>(pid.size()), &wrote, &at);
}

void close(std::intptr_t handle) { CloseHandle(handle_of(handle)); }  // closing the handle releases its lock

}  // namespace lock_file

}  // namespace rung
