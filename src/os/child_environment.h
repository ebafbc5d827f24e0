// The environment every child process rung starts runs with: this process's
// own, plus variables lent to children alone (the software GPU's driver paths).
// The host process's environment is never changed, so nothing it loads itself
// sees them. Every spawn in rung takes its environment from here.
#pragma once

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
// The variables lent to children, by name.
std::map<std::string, std::string> child_variables();

// A child's environment in the form posix_spawn takes: this process's
// environment with the lent variables set over it. Lives as long as the object.
class ChildEnvironment {
 public:
  ChildEnvironment();
  char** data() { return pointers_.data(); }

 private:
  std::vector<std::string> entries_;
  std::vector<char*> pointers_;
};

}  // namespace rung
