// Windows: a new file under a random name (CREATE_NEW: never an existing file),
// FlushFileBuffers, then MoveFileExW with MOVEFILE_REPLACE_EXISTING and
// MOVEFILE_WRITE_THROUGH (the move itself reaches the disk before it returns).
#include <windows.h>

#include <fmt/format.h>

#include <random>

#include "os/atomic_file.h"
#include "os/windows/handle.h"
#include "os/windows/text.h"

namespace rung {

namespace {

namespace fs = std::filesystem;

Error failed(const fs::path& path, const char* what, DWORD code = GetLastError()) {
  return Error{ErrorCode::kIo, fmt::format("{}: {} failed: {}", path.string(), what, windows_error_text(code))};
}

Status move_into_place(const fs::path& temporary, const fs::path& path) {
  // The target's name is replaced (a link there included, never written through).
  if (!MoveFileExW(temporary.c_str(), path.c_str(), MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH)) {
    Error e = failed(path, "replacing it");
    DeleteFileW(temporary.c_str());
    return e;
  }
  return {};
}

// Every byte of `contents` to `file`, or false with GetLastError() saying why.
bool write_all(HANDLE file, std::string_view contents) {
  std::size_t done = 0;
  while (done < contents.size()) {
    const std::size_t left = contents.size() - done;
    const DWORD chunk = left > 0x40000000 ? 0x40000000 : static_cast<DWORD>(left);  // WriteFile takes a DWORD
    DWORD wrote = 0;
    if (!WriteFile(file, contents.data() + done, chunk, &wrote, nullptr) || wrote == 0) return false;
    done += wrote;
  }
  return true;
}

// A write that failed part-way leaves nothing: the file is closed and removed.
// `why` is made by the caller before this runs, so it holds their last error.
Error abandoned(OwnedHandle& file, const fs::path& name, Error why) {
  file.close();
  DeleteFileW(name.c_str());
  return why;
}

}  // namespace

Status write_file_atomically(const fs::path& path, std::string_view contents) {
  static thread_local std::mt19937_64 random{std::random_device{}()};
  fs::path temporary;
  OwnedHandle file;
  for (int attempt = 0; attempt < 100 && !file.ok(); ++attempt) {
    temporary = path;
    temporary += fmt::format(".tmp.{:012x}", random() & 0xffffffffffffULL);
    file.h = CreateFileW(temporary.c_str(), GENERIC_WRITE, 0, nullptr, CREATE_NEW, FILE_ATTRIBUTE_NORMAL, nullptr);
    if (!file.ok() && GetLastError() != ERROR_FILE_EXISTS) break;
  }
  if (!file.ok()) return failed(path, "creating a temporary file");
  if (!write_all(file.h, contents)) return abandoned(file, temporary, failed(path, "write"));
  if (!FlushFileBuffers(file.h)) return abandoned(file, temporary, failed(path, "flush"));
  file.close();
  return move_into_place(temporary, path);
}

Status write_scratch_file(const fs::path& path, std::string_view contents) {
  DeleteFileW(path.c_str());  // a retried job's earlier file goes
  OwnedHandle file;
  file.h = CreateFileW(path.c_str(), GENERIC_WRITE, 0, nullptr, CREATE_NEW, FILE_ATTRIBUTE_NORMAL, nullptr);
  if (!file.ok()) return failed(path, "creating the file");
  if (!write_all(file.h, contents)) return abandoned(file, path, failed(path, "write"));
  return {};
}

Status commit_file(const fs::path& temporary, const fs::path& final_path) {
  // The temporary must be the file the child wrote: a regular file, not a link
  // (a reparse point) nor a directory put in its place.
  OwnedHandle file;
  file.h = CreateFileW(temporary.c_str(), GENERIC_WRITE, FILE_SHARE_READ, nullptr, OPEN_EXISTING,
                       FILE_FLAG_OPEN_REPARSE_POINT | FILE_FLAG_BACKUP_SEMANTICS, nullptr);
  if (!file.ok()) {
    return Error{ErrorCode::kIo, fmt::format("{}: not committed: {}", temporary.string(), windows_error_text(GetLastError()))};
  }
  BY_HANDLE_FILE_INFORMATION info{};
  if (!GetFileInformationByHandle(file.h, &info)) {
    return Error{ErrorCode::kIo, fmt::format("{}: not committed: {}", temporary.string(), windows_error_text(GetLastError()))};
  }
  if ((info.dwFileAttributes & (FILE_ATTRIBUTE_DIRECTORY | FILE_ATTRIBUTE_REPARSE_POINT)) != 0) {
    return Error{ErrorCode::kIo, fmt::format("{}: not committed: not a regular file", temporary.string())};
  }
  if (!FlushFileBuffers(file.h)) {
    return Error{ErrorCode::kIo, fmt::format("{}: not committed: {}", temporary.string(), windows_error_text(GetLastError()))};
  }
  file.close();
  return move_into_place(temporary, final_path);
}

}  // namespace rung
