// A directory for one piece of work: the one the caller gave, kept afterwards;
// or one made fresh by mkdtemp (a random name, mode 0700) and never an existing
// one: a directory another user made under a guessable name can neither be
// handed our results nor have us write through its links. A made one is
// removed, with everything in it, when the handle goes, or when a termination
// signal ends the process (os/termination.h).
#pragma once

#include <filesystem>
#include <string>

#include "rung/result.h"

namespace rung {

// $TMPDIR when it names an absolute directory no other user controls, else /tmp.
std::filesystem::path temporary_root();

class WorkDir {
 public:
  WorkDir() = default;
  // `prefix` names it ("rung-bench" gives rung-bench.Ab12Cd); `parent`, a
  // directory of the user's own (the cache directory), else temporary_root().
  static Result<WorkDir> create(const std::string& prefix, const std::filesystem::path& parent = {});
  // `given` when not empty (kept afterwards); else a fresh one as create() makes.
  Status open(const std::filesystem::path& given, const std::string& prefix);

  WorkDir(WorkDir&& other) noexcept;
  WorkDir& operator=(WorkDir&& other) noexcept;
  WorkDir(const WorkDir&) = delete;
  WorkDir& operator=(const WorkDir&) = delete;
  ~WorkDir();

  const std::filesystem::path& path() const { return path_; }

 private:
  WorkDir(std::filesystem::path path, bool owned);
  void remove();
  std::filesystem::path path_;
  bool owned_ = false;
};

}  // namespace rung
