// Windows: CreateFileW sharing reading, writing and deleting with others (as a
// POSIX reader never locks a writer out), the type from GetFileType on the open
// handle before any read, then ReadFile at an offset. Opening a named pipe never
// waits: with no instance free the system answers ERROR_PIPE_BUSY at once.
#include <windows.h>

#include <fmt/format.h>

#include "os/opened_file.h"
#include "os/regular_file.h"
#include "os/windows/handle.h"
#include "os/windows/text.h"

namespace rung {
namespace {

Error open_error(const std::filesystem::path& path, const std::string& where, DWORD code) {
  switch (code) {
    case ERROR_FILE_NOT_FOUND:
    case ERROR_PATH_NOT_FOUND:
    case ERROR_INVALID_NAME: return missing_path(path, where);
    case ERROR_PIPE_BUSY: return wrong_kind(where, "a named pipe", WantedKind::kFile);
    case ERROR_ACCESS_DENIED: {
      // A directory cannot be opened as a file at all: said as what it is.
      const DWORD attributes = GetFileAttributesW(path.c_str());
      if (attributes != INVALID_FILE_ATTRIBUTES && (attributes & FILE_ATTRIBUTE_DIRECTORY) != 0) {
        return wrong_kind(where, "a directory", WantedKind::kFile);
      }
      break;
    }
    default: break;
  }
  return Error{ErrorCode::kIo, fmt::format("{}: cannot be read: {}", where, windows_error_text(code))};
}

const char* kind_of(DWORD type) {
  switch (type) {
    case FILE_TYPE_CHAR: return "a character device";
    case FILE_TYPE_PIPE: return "a named pipe";
    default: return "not a file";
  }
}

// ReadFile takes a DWORD; a larger read is done in pieces by the caller's loop.
DWORD piece(std::size_t length) { return length > 0x40000000 ? 0x40000000 : static_cast<DWORD>(length); }

}  // namespace

Result<OpenedFile> OpenedFile::open(const std::filesystem::path& path) {
  std::string where = utf8_of(path.wstring());
  const HANDLE h = CreateFileW(path.c_str(), GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, nullptr, OPEN_EXISTING,
                               FILE_ATTRIBUTE_NORMAL, nullptr);
  if (h == INVALID_HANDLE_VALUE) return open_error(path, where, GetLastError());
  const DWORD type = GetFileType(h);
  BY_HANDLE_FILE_INFORMATION info{};
  if (type != FILE_TYPE_DISK || !GetFileInformationByHandle(h, &info) || (info.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY) != 0) {
    const bool directory = type == FILE_TYPE_DISK && (info.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY) != 0;
    CloseHandle(h);
    return wrong_kind(where, directory ? "a directory" : kind_of(type), WantedKind::kFile);
  }
  const std::uint64_t size = (static_cast<std::uint64_t>(info.nFileSizeHigh) << 32) | info.nFileSizeLow;
  return OpenedFile(bits_of(h), size, std::move(where));
}

OpenedFile::~OpenedFile() {
  if (handle_ != kClosed) CloseHandle(handle_of(handle_));
}

Result<std::size_t> OpenedFile::read_at(void* into, std::size_t length, std::uint64_t offset) const {
  OVERLAPPED at{};
  at.Offset = static_cast<DWORD>(offset & 0xffffffffu);
  at.OffsetHigh = static_cast<DWORD>(offset >> 32);
  DWORD got = 0;
  if (!ReadFile(handle_of(handle_), into, piece(length), &got, &at)) {
    const DWORD code = GetLastError();
    if (code == ERROR_HANDLE_EOF) return std::size_t{0};  // an offset at or past the end
    return Error{ErrorCode::kIo, fmt::format("{}: cannot be read: {}", where_, windows_error_text(code))};
  }
  return static_cast<std::size_t>(got);
}

Result<std::size_t> OpenedFile::read_next(void* into, std::size_t length) {
  DWORD got = 0;
  if (!ReadFile(handle_of(handle_), into, piece(length), &got, nullptr)) {
    return Error{ErrorCode::kIo, fmt::format("{}: cannot be read: {}", where_, windows_error_text(GetLastError()))};
  }
  return static_cast<std::size_t>(got);
}

}  // namespace rung
