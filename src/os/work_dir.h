// A directory for one piece of work: the one the caller gave, kept afterwards;
// or one made fresh by mkdtemp (a random name, mode 0700) and never an existing
// one: a directory another user made under a guessable name can neither be
// handed our results nor have us write through its links. A made one is
// removed, with everything in it, when the handle goes, or when a termination
// signal ends the process (os/termination.h).
//
// A process killed outright (SIGKILL, out of memory) cannot remove its own, so
// each made directory holds a note of who made it (kOwnerFile: the process's
// pid, start time, boot, host and pid namespace), and the first create() in a
// parent directory, in each process, removes the ones there whose maker has
// ended: directories (never links) owned by this user, named NAME.XXXXXX, with
// a note of this user's that names a process sure to have ended. Anything else
// (another user's, a live process's, one with no note or a damaged one) is left.
#pragma once

#include <filesystem>
#include <string>

#include "rung/result.h"

namespace rung {

// $TMPDIR when it names an absolute directory no other user controls, else /tmp.
std::filesystem::path temporary_root();

// The note inside each made work directory naming the process that made it.
inline constexpr char kWorkDirOwnerFile[] = ".rung-owner";

// Removes, under `parent`, the work directories whose makers have ended (as
// above); how many. create() calls it once per parent and process.
std::size_t remove_abandoned_work_dirs(const std::filesystem::path& parent);

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
  // A made directory whose contents are finished, put in place as `final_path` (which
  // must not exist; the same file system): its owner note removed, its files and
  // itself fsynced, renamed, and no longer removed when the handle goes.
  Status keep_as(const std::filesystem::path& final_path);

 private:
  WorkDir(std::filesystem::path path, bool owned);
  void remove();
  std::filesystem::path path_;
  bool owned_ = false;
};

}  // namespace rung
