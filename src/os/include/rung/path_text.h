// Text becomes a path here and nowhere else. rung's text is UTF-8 (arguments,
// the C ABI's strings, job and cache files, the environment as rung reads it);
// std::filesystem::path made from a narrow string reads it in the system's code
// page on Windows (mingw's libstdc++: one byte per UTF-16 unit), so "café"
// would name another file. Made from char8_t, it is read as UTF-8 on Windows,
// and on POSIX the bytes pass unchanged, UTF-8 or not. A path back to text
// (path::string()) is UTF-8 on both.
#pragma once

#include <filesystem>
#include <optional>
#include <string_view>

namespace rung {

std::filesystem::path path_from_utf8(std::string_view text);

// The path an environment variable of rung's command line names (RUNG_CACHE_DIR,
// RUNG_DEPS_DIR), read as the system keeps it (UTF-16 on Windows); nullopt when
// unset or empty. The engine reads no variable unless its application asks.
std::optional<std::filesystem::path> path_in_variable(const char* name);

}  // namespace rung
