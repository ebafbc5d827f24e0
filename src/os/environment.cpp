#include "os/environment.h"

#include <cstdlib>
#include <cstring>

// The guard's way in (os/environment_guard.h); a build without the guard (the fuzzers, Windows) reads directly.
#ifndef RUNG_ENVIRONMENT_READ
#define RUNG_ENVIRONMENT_READ(name) std::getenv(name)
#endif

namespace rung {
namespace {

bool is_rungs(const char* name) { return std::strncmp(name, "RUNG_", 5) == 0; }

std::optional<std::string> read(const char* name, bool empty_counts) {
  const char* value = RUNG_ENVIRONMENT_READ(name);
  if (value == nullptr || (*value == '\0' && !empty_counts)) return std::nullopt;
  return std::string(value);
}

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
