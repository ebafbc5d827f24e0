#include "os/windows/long_path.h"

#include <windows.h>

namespace rung {

std::wstring long_path_form(const std::filesystem::path& path) {
  std::wstring p = path.native();
  for (auto& c : p) {
    if (c == L'/') c = L'\\';
  }
  if (p.rfind(L"\\\\?\\", 0) == 0) return p;
  // GetFullPathNameW makes it absolute and resolves "." and "..", which "\\?\" would take literally.
  std::wstring full(p.size() + MAX_PATH, L'\0');
  for (int attempt = 0; attempt < 3; ++attempt) {
    const DWORD n = GetFullPathNameW(p.c_str(), static_cast<DWORD>(full.size()), full.data(), nullptr);
    if (n == 0) return p;  // the caller's own call then fails with the system's reason
    if (n < full.size()) {
      full.resize(n);
      break;
    }
    full.assign(n + 1, L'\0');
  }
  if (full.rfind(L"\\\\?\\", 0) == 0 || full.rfind(L"\\\\.\\", 0) == 0) return full;
  if (full.rfind(L"\\\\", 0) == 0) return L"\\\\?\\UNC\\" + full.substr(2);
  return L"\\\\?\\" + full;
}

}  // namespace rung
