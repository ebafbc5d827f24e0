// Windows: %LOCALAPPDATA%\rung\{cache,data}: the variable when it holds an
// absolute path (as XDG_CACHE_HOME may name another place on Linux), else the
// known folder the system names for the user's local application data.
#include <windows.h>
#include <knownfolders.h>
#include <shlobj.h>

#include <fmt/format.h>

#include <string>

#include "os/windows/text.h"
#include "rung/path_text.h"
#include "rung/user_dirs.h"

namespace rung {
namespace fs = std::filesystem;
namespace {

Result<fs::path> local_app_data() {
  wchar_t value[32768];
  const DWORD n = GetEnvironmentVariableW(L"LOCALAPPDATA", value, sizeof value / sizeof value[0]);
  if (n > 0 && n < sizeof value / sizeof value[0]) {
    fs::path dir(std::wstring(value, n));
    if (dir.is_absolute()) return dir;
  }
  PWSTR known = nullptr;
  const HRESULT hr = SHGetKnownFolderPath(FOLDERID_LocalAppData, KF_FLAG_DEFAULT, nullptr, &known);
  if (FAILED(hr) || known == nullptr) {
    if (known != nullptr) CoTaskMemFree(known);
    return Error{ErrorCode::kNotFound, fmt::format("LOCALAPPDATA is not an absolute path, and the system names no local application data "
                                                   "folder for this user: {}; set LOCALAPPDATA",
                                                   windows_error_text(static_cast<unsigned long>(hr)))};
  }
  fs::path dir(known);
  CoTaskMemFree(known);
  return dir;
}

Result<fs::path> under_local_app_data(const char* sub) {
  auto base = local_app_data();
  if (!base) return base.error();
  return *base / "rung" / path_from_utf8(sub);
}

}  // namespace

Result<fs::path> user_cache_dir() { return under_local_app_data("cache"); }

Result<fs::path> user_data_dir() { return under_local_app_data("data"); }

}  // namespace rung
