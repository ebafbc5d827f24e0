// Windows: FindFirstFileExW on the "\\?\" form, so a directory past MAX_PATH
// is listed and removed (os/directory.h says why not std::filesystem's).
#include <windows.h>

#include <fmt/format.h>

#include <string>

#include "rung/directory.h"
#include "os/windows/long_path.h"
#include "os/windows/text.h"

namespace rung {
namespace fs = std::filesystem;
namespace {

struct Found {
  std::wstring name;
  DWORD attributes = 0;
};

bool descends(DWORD attributes) { return (attributes & FILE_ATTRIBUTE_DIRECTORY) != 0 && (attributes & FILE_ATTRIBUTE_REPARSE_POINT) == 0; }

// The entries of one directory given in its long form; the system's error code, or 0.
DWORD entries_of(const std::wstring& long_dir, std::vector<Found>& out, std::size_t max_entries) {
  WIN32_FIND_DATAW data{};
  HANDLE h = FindFirstFileExW((long_dir + L"\\*").c_str(), FindExInfoBasic, &data, FindExSearchNameMatch, nullptr, FIND_FIRST_EX_LARGE_FETCH);
  if (h == INVALID_HANDLE_VALUE) {
    const DWORD code = GetLastError();
    return code == ERROR_FILE_NOT_FOUND ? 0 : code;  // an empty drive root has not even "."
  }
  DWORD code = 0;
  do {
    const std::wstring name = data.cFileName;
    if (name == L"." || name == L"..") continue;
    if (out.size() >= max_entries) break;
    out.push_back({name, data.dwFileAttributes});
  } while (FindNextFileW(h, &data));
  if (out.size() < max_entries && GetLastError() != ERROR_NO_MORE_FILES) code = GetLastError();
  FindClose(h);
  return code;
}

// Visits `dir` (long form `long_dir`); false in `go_on` once the visitor or the count says stop.
Status visit_into(const fs::path& dir, const std::wstring& long_dir, const Listing& how,
                  const std::function<bool(const fs::path&)>& visit, std::size_t& seen, bool& go_on) {
  std::vector<Found> found;
  const DWORD code = entries_of(long_dir, found, how.max_entries - seen);
  if (code != 0) return Error{ErrorCode::kIo, fmt::format("cannot list {}: {}", dir.string(), windows_error_text(code))};
  for (const auto& f : found) {
    if (seen >= how.max_entries) go_on = false;
    if (!go_on) return {};
    ++seen;
    const fs::path entry = dir / f.name;
    if (!visit(entry)) {
      go_on = false;
      return {};
    }
    if (!how.recursive || !descends(f.attributes)) continue;
    Status below = visit_into(entry, long_dir + L"\\" + f.name, how, visit, seen, go_on);
    if (!below && !how.skip_unreadable) return below;
  }
  return {};
}

std::uintmax_t remove_long(const std::wstring& long_path, std::error_code& ec) {
  const DWORD attributes = GetFileAttributesW(long_path.c_str());
  if (attributes == INVALID_FILE_ATTRIBUTES) {
    const DWORD code = GetLastError();
    if (code != ERROR_FILE_NOT_FOUND && code != ERROR_PATH_NOT_FOUND && !ec) ec = std::error_code(static_cast<int>(code), std::system_category());
    return 0;
  }
  std::uintmax_t removed = 0;
  if (descends(attributes)) {
    std::vector<Found> found;
    const DWORD code = entries_of(long_path, found, static_cast<std::size_t>(-1));
    if (code != 0 && !ec) ec = std::error_code(static_cast<int>(code), std::system_category());
    for (const auto& f : found) removed += remove_long(long_path + L"\\" + f.name, ec);
  }
  // A read-only file or directory cannot be deleted until it is writable again.
  if ((attributes & FILE_ATTRIBUTE_READONLY) != 0) SetFileAttributesW(long_path.c_str(), attributes & ~FILE_ATTRIBUTE_READONLY);
  const BOOL gone = (attributes & FILE_ATTRIBUTE_DIRECTORY) != 0 ? RemoveDirectoryW(long_path.c_str()) : DeleteFileW(long_path.c_str());
  if (gone) return removed + 1;
  if (!ec) ec = std::error_code(static_cast<int>(GetLastError()), std::system_category());
  return removed;
}

}  // namespace

Status visit_directory(const fs::path& dir, const Listing& how, const std::function<bool(const fs::path&)>& visit) {
  std::size_t seen = 0;
  bool go_on = how.max_entries > 0;
  if (!go_on) return {};
  return visit_into(dir, long_path_form(dir), how, visit, seen, go_on);
}

std::uintmax_t remove_tree(const fs::path& path, std::error_code& ec) {
  ec.clear();
  return remove_long(long_path_form(path), ec);
}

}  // namespace rung
