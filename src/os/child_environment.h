// The environment every child process rung starts runs with: this process's
// own, plus variables lent to children alone (the software GPU's driver paths).
// The host process's environment is never changed, so nothing it loads itself
// sees them. Every spawn in rung takes its environment from here.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace rung {

// Sets (or replaces) a variable for every child started from now on.
void set_child_variable(const std::string& name, const std::string& value);
// Sets a variable in this process's own environment unless it holds a non-empty
// value: only for rung's own executables (the CLI, the worker), never from the engine.
void set_own_variable_unless_set(const std::string& name, const std::string& value);
// Forgets one lent variable (children then get this process's own value, if any).
void unset_child_variable(const std::string& name);
// Children's loaders search `dir` first for libraries (LD_LIBRARY_PATH; PATH on
// Windows), then where this process's would; forgotten by forget_child_library_path.
void put_first_on_child_library_path(const std::filesystem::path& dir);
void forget_child_library_path();
// The variables lent to children, by name.
std::map<std::string, std::string> child_variables();

// A child's environment: this process's with the lent variables set over it,
// as "NAME=value" entries (UTF-8); each system's spawn puts them in its own form.
class ChildEnvironment {
 public:
  ChildEnvironment();
  const std::vector<std::string>& entries() const { return entries_; }

 private:
  std::vector<std::string> entries_;
};

// This process's environment as "NAME=value" entries (UTF-8), each system's own
// (os/posix/child_environment.cpp, os/windows/child_environment.cpp).
std::vector<std::string> this_process_environment();
// The variable the system's loader searches for libraries by, and what separates its entries.
const char* library_path_variable();
char library_path_separator();

}  // namespace rung
