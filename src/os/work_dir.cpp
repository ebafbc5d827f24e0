#include "os/work_dir.h"

#include <fmt/format.h>
#include <stdlib.h>

namespace rung {

Status WorkDir::open(const std::filesystem::path& given, const std::string& prefix) {
  if (!given.empty()) {
    path_ = given;
    return {};
  }
  std::string tmpl = (std::filesystem::temp_directory_path() / (prefix + ".XXXXXX")).string();
  if (mkdtemp(tmpl.data()) == nullptr) return Error{ErrorCode::kIo, fmt::format("cannot create a work directory like {}", tmpl)};
  path_ = tmpl;
  owned_ = true;
  return {};
}

WorkDir::~WorkDir() {
  std::error_code ec;
  if (owned_) std::filesystem::remove_all(path_, ec);
}

}  // namespace rung
