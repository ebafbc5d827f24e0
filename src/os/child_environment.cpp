#include "os/child_environment.h"

#include <unistd.h>  // environ (declared there under _GNU_SOURCE, which g++ defines)

#include <cstdlib>
#include <mutex>

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

void set_own_variable_unless_set(const std::string& name, const std::string& value) {
  const char* set = std::getenv(name.c_str());
  if (set == nullptr || *set == '\0') ::setenv(name.c_str(), value.c_str(), 1);
}

void unset_child_variable(const std::string& name) {
  std::lock_guard lock(mutex);
  lent().erase(name);
}

std::map<std::string, std::string> child_variables() {
  std::lock_guard lock(mutex);
  return lent();
}

ChildEnvironment::ChildEnvironment() {
  const auto extra = child_variables();
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    if (!extra.count(entry.substr(0, entry.find('=')))) entries_.push_back(entry);
  }
  for (const auto& [name, value] : extra) entries_.push_back(name + "=" + value);
  for (auto& e : entries_) pointers_.push_back(e.data());
  pointers_.push_back(nullptr);
}

}  // namespace rung
