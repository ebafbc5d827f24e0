// The work directories the cleanup removes, the same on every system; the
// signals (or console events) that start it are each system's.
#include "os/termination.h"

#include <algorithm>
#include <atomic>
#include <vector>

#include "os/termination_state.h"
#include "rung/directory.h"

namespace rung {
namespace fs = std::filesystem;
namespace {

// Never destroyed: the cleanup may run during exit.
std::vector<fs::path>& work_dirs() {
  static auto* dirs = new std::vector<fs::path>;
  return *dirs;
}

std::atomic<bool> ending{false};

}  // namespace

std::mutex& termination_mutex() {
  static auto* mutex = new std::mutex;
  return *mutex;
}

bool termination_begun() { return ending; }

void begin_termination() { ending = true; }

void remove_tracked_work_dirs() {
  for (const auto& dir : work_dirs()) {
    std::error_code ec;
    remove_tree(dir, ec);
  }
}

void track_work_dir(const fs::path& dir) {
  {
    std::lock_guard<std::mutex> lock(termination_mutex());
    if (!ending) {
      work_dirs().push_back(dir);
      return;
    }
    std::error_code ec;
    remove_tree(dir, ec);
  }
  park_until_the_end();
}

void create_directories_unless_ending(const fs::path& dir, std::error_code& ec) {
  {
    std::lock_guard<std::mutex> lock(termination_mutex());
    if (!ending) {
      fs::create_directories(dir, ec);
      return;
    }
  }
  park_until_the_end();
}

void untrack_work_dir(const fs::path& dir) {
  std::lock_guard<std::mutex> lock(termination_mutex());
  auto& v = work_dirs();
  v.erase(std::remove(v.begin(), v.end(), dir), v.end());
}

}  // namespace rung
