// The dlopen shim: one handle type with a deleter, and nothing else.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

namespace rung {

struct DynamicLibraryCloser {
  void operator()(void* handle) const;
};
using DynamicLibrary = std::unique_ptr<void, DynamicLibraryCloser>;

// Opens by absolute path only (never a bare name, never the current directory),
// with RTLD_NOW | RTLD_LOCAL so two ONNX Runtime builds never see each other's symbols.
// On failure returns null and sets `error` to dlerror()'s text.
DynamicLibrary open_library(const std::filesystem::path& absolute_path, std::string& error);

void* find_symbol(const DynamicLibrary& library, const char* name);

// Keeps a library mapped until the process exits. A C++ runtime whose static
// constructors ran must not be unloaded: its destructors would run at exit
// against freed code.
void* keep_loaded_forever(DynamicLibrary library);

}  // namespace rung
