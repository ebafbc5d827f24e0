#include "os/temp_dir.h"

#include <fmt/format.h>
#include <stdlib.h>

#include <ctime>

namespace rung {

Result<TempDir> TempDir::create(const std::string& prefix) {
  std::string tmpl = (std::filesystem::temp_directory_path() / (prefix + ".XXXXXX")).string();
  if (::mkdtemp(tmpl.data()) == nullptr) return Error{ErrorCode::kIo, fmt::format("cannot create a work directory like {}", tmpl)};
  return TempDir(tmpl);
}

TempDir::~TempDir() {
  std::error_code ec;
  if (!path_.empty()) std::filesystem::remove_all(path_, ec);
}

std::string utc_now() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace rung
