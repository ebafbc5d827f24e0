#include "os/system_library.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <map>
#include <mutex>

namespace rung {

std::string system_library_name(SystemLibrary library) {
  switch (library) {
    case SystemLibrary::kPostgresClient: return "libpq.so.5";  // its soname since PostgreSQL 8.0
    case SystemLibrary::kCrypto: return "libcrypto.so.3";       // OpenSSL 3's
    case SystemLibrary::kSqlite: return "libsqlite3.so.0";      // SQLite 3's
    case SystemLibrary::kImages: return "libstb.so.0";          // Debian's stb build
  }
  return {};
}

Result<void*> open_system_library(SystemLibrary library) {
  static std::mutex mutex;
  static auto* opened = new std::map<SystemLibrary, void*>();  // leaked on purpose: never unloaded
  std::lock_guard lock(mutex);
  if (auto it = opened->find(library); it != opened->end()) return it->second;
  const std::string name = system_library_name(library);
  // A bare soname: the loader's own search for a linked library. A name without a
  // slash never searches the current directory (unless LD_LIBRARY_PATH says so).
  dlerror();
  void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    return Error{ErrorCode::kLoadFailed, fmt::format("{} cannot be loaded: {}", name, why != nullptr ? why : "dlopen failed")};
  }
  (*opened)[library] = handle;  // never closed: its atexit handlers and threads may outlive any caller
  return handle;
}

void* system_library_symbol(void* library, const char* name) { return library != nullptr ? dlsym(library, name) : nullptr; }

}  // namespace rung
