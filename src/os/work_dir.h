// A directory for one piece of work, made fresh by mkdtemp (a random name,
// mode 0700) and never an existing one: a directory another user made under a
// guessable name can neither be handed our results nor have us write through
// its links. Removed, with everything in it, when the handle goes, or when a
// termination signal ends the process (os/termination.h).
#pragma once

#include <filesystem>
#include <string>

#include "rung/result.h"

namespace rung {

// $TMPDIR when it names an absolute directory no other user controls, else /tmp.
std::filesystem::path temporary_root();

class WorkDir {
 public:
  // `prefix` names it ("rung-bench" gives rung-bench.Ab12Cd); `parent`, a
  // directory of the user's own (the cache directory), else temporary_root().
  static Result<WorkDir> create(const std::string& prefix, const std::filesystem::path& parent = {});

  WorkDir(WorkDir&& other) noexcept;
  WorkDir& operator=(WorkDir&&) = delete;
  WorkDir(const WorkDir&) = delete;
  ~WorkDir();

  const std::filesystem::path& path() const { return path_; }

 private:
  explicit WorkDir(std::filesystem::path path);
  std::filesystem::path path_;
};

}  // namespace rung
