#include "os/dynamic_library.h"

#include <dlfcn.h>

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

}  // namespace rung
