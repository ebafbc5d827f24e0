#include "os/dynamic_library.h"

#include <dlfcn.h>

#include <mutex>
#include <vector>

namespace rung {

void DynamicLibraryCloser::operator()(void* handle) const {
  if (handle != nullptr) dlclose(handle);
}

DynamicLibrary open_library(const std::filesystem::path& absolute_path, std::string& error) {
  if (!absolute_path.is_absolute()) {
    error = "refusing to load a library by relative path: " + absolute_path.string();
    return nullptr;
  }
  dlerror();
  void* handle = dlopen(absolute_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    error = why != nullptr ? why : "dlopen failed";
  }
  return DynamicLibrary(handle);
}

void* find_symbol(const DynamicLibrary& library, const char* name) {
  return library ? dlsym(library.get(), name) : nullptr;
}

void* keep_loaded_forever(DynamicLibrary library) {
  static std::mutex mutex;
  static auto* kept = new std::vector<void*>();  // leaked on purpose: never unloaded
  std::lock_guard lock(mutex);
  kept->push_back(library.release());
  return kept->back();
}

}  // namespace rung
