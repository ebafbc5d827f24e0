#include "os/child_environment.h"

#include "os/environment.h"

#include <mutex>
#include <utility>

namespace rung {
namespace {

std::mutex mutex;
std::map<std::string, std::string>& lent() {
  static std::map<std::string, std::string> variables;
  return variables;
}

}  // namespace

void set_child_variable(const std::string& name, const std::string& value) {
  std::lock_guard lock(mutex);
  lent()[name] = value;
}

void unset_child_variable(const std::string& name) {
  std::lock_guard lock(mutex);
  lent().erase(name);
}

void put_first_on_child_library_path(const std::filesystem::path& dir) {
  const auto path = system_variable(library_path_variable());
  set_child_variable(library_path_variable(), path ? dir.string() + library_path_separator() + *path : dir.string());
}

void forget_child_library_path() { unset_child_variable(library_path_variable()); }

std::map<std::string, std::string> child_variables() {
  std::lock_guard lock(mutex);
  return lent();
}

ChildEnvironment::ChildEnvironment() {
  const auto extra = child_variables();
  for (auto& entry : this_process_environment()) {
    // Windows keeps per-drive directories as "=C:=C:\\dir": a name never starts at its '='.
    const auto equals = entry.find('=', 1);
    if (!extra.count(entry.substr(0, equals))) entries_.push_back(std::move(entry));
  }
  for (const auto& [name, value] : extra) entries_.push_back(name + "=" + value);
}

}  // namespace rung
