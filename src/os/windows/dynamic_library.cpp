// Windows: LoadLibraryExW with a search path of the library's own directory and
// System32 only (never the current directory, never PATH), so a DLL planted
// beside the caller cannot stand in for one of ONNX Runtime's dependencies.
#include "os/dynamic_library.h"

#include <windows.h>


#include "os/windows/text.h"

namespace rung {

void DynamicLibraryCloser::operator()(void* handle) const {
  if (handle != nullptr) FreeLibrary(static_cast<HMODULE>(handle));
}

DynamicLibrary open_library(const std::filesystem::path& absolute_path, std::string& error) {
  if (!absolute_path.is_absolute()) {
    error = "refusing to load a library by relative path: " + absolute_path.string();
    return nullptr;
  }
  // No "cannot find a DLL" dialog box: the error comes back as a value.
  DWORD previous = 0;
  SetThreadErrorMode(SEM_FAILCRITICALERRORS | SEM_NOOPENFILEERRORBOX, &previous);
  HMODULE handle = LoadLibraryExW(absolute_path.wstring().c_str(), nullptr, LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR | LOAD_LIBRARY_SEARCH_SYSTEM32);
  const DWORD code = handle == nullptr ? GetLastError() : 0;
  SetThreadErrorMode(previous, nullptr);
  if (handle == nullptr) error = windows_error_text(code);
  return DynamicLibrary(handle);
}

void* find_symbol(const DynamicLibrary& library, const char* name) {
  return library ? reinterpret_cast<void*>(GetProcAddress(static_cast<HMODULE>(library.get()), name)) : nullptr;
}

}  // namespace rung
