#include "os/environment.h"

#include <cstdlib>
#include <cstring>

#ifdef _WIN32
#include "os/windows/text.h"
#endif

// The guard's way in (os/environment_guard.h); a build without the guard (the fuzzers, Windows) reads directly.
#ifndef RUNG_ENVIRONMENT_READ
#define RUNG_ENVIRONMENT_READ(name) std::getenv(name)
#endif

namespace rung {
namespace {

bool is_rungs(const char* name) { return std::strncmp(name, "RUNG_", 5) == 0; }

#ifdef _WIN32
// Windows keeps the environment in UTF-16; getenv would give it in the ANSI code page.
std::optional<std::string> read(const char* name, bool empty_counts) {
  const wchar_t* value = _wgetenv(wide_of(name).c_str());
  if (value == nullptr || (*value == L'\0' && !empty_counts)) return std::nullopt;
  return utf8_of(value);
}
#else
std::optional<std::string> read(const char* name, bool empty_counts) {
  const char* value = RUNG_ENVIRONMENT_READ(name);
  if (value == nullptr || (*value == '\0' && !empty_counts)) return std::nullopt;
  return std::string(value);
}
#endif

}  // namespace

std::optional<std::string> rung_variable(const char* name, bool allowed, bool empty_counts) {
  if (!is_rungs(name) || !allowed) return std::nullopt;
  return read(name, empty_counts);
}

std::optional<std::string> system_variable(const char* name) {
  if (is_rungs(name)) return std::nullopt;
  return read(name, false);
}

std::optional<std::string> any_variable(const char* name, bool rung_allowed) {
  return is_rungs(name) ? rung_variable(name, rung_allowed) : system_variable(name);
}

}  // namespace rung
