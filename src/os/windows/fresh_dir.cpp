// Windows: CreateDirectoryW under a random name (it fails on an existing one),
// the user's temporary directory from GetTempPathW, handles opened without
// following a reparse point, FlushFileBuffers and MoveFileExW with write-through.
#include <windows.h>

#include <fmt/format.h>

#include <random>

#include "os/fresh_dir.h"
#include "os/windows/handle.h"
#include "os/windows/security.h"
#include "os/windows/text.h"
#include "rung/directory.h"
#include "rung/path_text.h"

namespace rung {
namespace fs = std::filesystem;

fs::path system_temporary_root() {
  wchar_t buffer[MAX_PATH + 2];
  const DWORD n = GetTempPathW(MAX_PATH + 2, buffer);
  if (n == 0 || n > MAX_PATH + 1) return fs::temp_directory_path();
  return fs::path(std::wstring(buffer, n)).lexically_normal().parent_path();
}

Result<fs::path> make_fresh_dir(const fs::path& under, const std::string& prefix) {
  static constexpr char kLetters[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  static thread_local std::mt19937_64 random{std::random_device{}()};
  DWORD code = ERROR_ALREADY_EXISTS;
  for (int attempt = 0; attempt < 100 && code == ERROR_ALREADY_EXISTS; ++attempt) {
    std::string name = prefix + ".";
    for (int i = 0; i < 6; ++i) name += kLetters[random() % (sizeof kLetters - 1)];
    const fs::path dir = under / path_from_utf8(name);
    // The parent's inherited access list: the user's temporary and cache directories are the user's alone.
    if (CreateDirectoryW(dir.c_str(), nullptr)) return dir;
    code = GetLastError();
  }
  return Error{ErrorCode::kIo, fmt::format("cannot create a work directory in {}: {}", under.string(), windows_error_text(code))};
}

namespace {

// A handle on `path` itself: a reparse point is opened, not followed.
HANDLE open_itself(const fs::path& path, DWORD access) {
  return CreateFileW(path.c_str(), access, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, nullptr, OPEN_EXISTING,
                     FILE_FLAG_BACKUP_SEMANTICS | FILE_FLAG_OPEN_REPARSE_POINT, nullptr);
}

bool is_own(HANDLE h, bool directory) {
  BY_HANDLE_FILE_INFORMATION info{};
  if (!GetFileInformationByHandle(h, &info) || (info.dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT) != 0) return false;
  if (((info.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY) != 0) != directory) return false;
  return owned_by_this_user(h);
}

}  // namespace

std::optional<std::string> read_own_note(const fs::path& dir, const std::string& name, std::size_t max_bytes) {
  OwnedHandle d(open_itself(dir, READ_CONTROL | FILE_READ_ATTRIBUTES));
  if (!d.ok() || !is_own(d.h, true)) return std::nullopt;
  OwnedHandle note(open_itself(dir / path_from_utf8(name), GENERIC_READ | READ_CONTROL));
  if (!note.ok() || !is_own(note.h, false) || GetFileType(note.h) != FILE_TYPE_DISK) return std::nullopt;
  LARGE_INTEGER size{};
  if (!GetFileSizeEx(note.h, &size) || static_cast<std::uint64_t>(size.QuadPart) >= max_bytes) return std::nullopt;
  std::string text(static_cast<std::size_t>(size.QuadPart), '\0');
  DWORD got = 0;
  if (!text.empty() && (!ReadFile(note.h, text.data(), static_cast<DWORD>(text.size()), &got, nullptr))) return std::nullopt;
  text.resize(got);
  return text;
}

Status sync_and_rename_dir(const fs::path& dir, const fs::path& final_path) {
  auto below = list_directory(dir, {.recursive = true});
  if (!below) return below.error();
  std::error_code ec;
  for (const auto& e : *below) {
    if (!fs::is_regular_file(fs::symlink_status(e, ec))) continue;
    OwnedHandle file(open_itself(e, GENERIC_WRITE));
    if (file.ok()) FlushFileBuffers(file.h);
  }
  if (fs::exists(fs::symlink_status(final_path, ec))) {
    return Error{ErrorCode::kInvalidArgument, fmt::format("{}: already there; nothing was replaced", final_path.string())};
  }
  // Without MOVEFILE_REPLACE_EXISTING: a directory that appeared meanwhile is never replaced.
  if (!MoveFileExW(dir.c_str(), final_path.c_str(), MOVEFILE_WRITE_THROUGH)) {
    return Error{ErrorCode::kIo, fmt::format("cannot rename {} to {}: {}", dir.string(), final_path.string(), windows_error_text(GetLastError()))};
  }
  return {};
}

}  // namespace rung
