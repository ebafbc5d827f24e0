// A command's work directory: the one the caller gave, kept afterwards; or a
// fresh one under the temp directory, removed however the command ends.
#pragma once

#include <filesystem>
#include <string>

#include "rung/result.h"

namespace rung {

class WorkDir {
 public:
  WorkDir() = default;
  // `given` when not empty; else a new "<prefix>.XXXXXX" under the temp directory.
  Status open(const std::filesystem::path& given, const std::string& prefix);
  ~WorkDir();
  WorkDir(const WorkDir&) = delete;
  WorkDir& operator=(const WorkDir&) = delete;

  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  bool owned_ = false;
};

}  // namespace rung
