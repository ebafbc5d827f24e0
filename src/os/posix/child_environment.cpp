// POSIX: the environment is `environ`; setenv changes this process's own.
#include <unistd.h>  // environ (declared there under _GNU_SOURCE, which g++ defines)

#include <cstdlib>

#include "os/child_environment.h"
#include "os/environment.h"

namespace rung {

void set_own_variable_unless_set(const std::string& name, const std::string& value) {
  if (!system_variable(name.c_str())) ::setenv(name.c_str(), value.c_str(), 1);
}

std::vector<std::string> this_process_environment() {
  std::vector<std::string> entries;
  for (char** e = environ; *e != nullptr; ++e) entries.emplace_back(*e);
  return entries;
}

const char* library_path_variable() { return "LD_LIBRARY_PATH"; }
char library_path_separator() { return ':'; }

}  // namespace rung
