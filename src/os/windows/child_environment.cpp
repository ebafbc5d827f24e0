// Windows: the environment block is UTF-16 (GetEnvironmentStringsW); the C
// runtime's copy and the system's are both changed by _wputenv_s.
#include <windows.h>

#include <cstdlib>

#include "os/child_environment.h"
#include "os/windows/text.h"

namespace rung {

void set_own_variable_unless_set(const std::string& name, const std::string& value) {
  const std::wstring wide_name = wide_of(name);
  const wchar_t* set = _wgetenv(wide_name.c_str());
  if (set == nullptr || *set == L'\0') _wputenv_s(wide_name.c_str(), wide_of(value).c_str());
}

std::vector<std::string> this_process_environment() {
  std::vector<std::string> entries;
  wchar_t* block = GetEnvironmentStringsW();
  if (block == nullptr) return entries;
  for (const wchar_t* e = block; *e != L'\0'; e += wcslen(e) + 1) entries.push_back(utf8_of(e));
  FreeEnvironmentStringsW(block);
  return entries;
}

const char* library_path_variable() { return "PATH"; }
char library_path_separator() { return ';'; }

}  // namespace rung
