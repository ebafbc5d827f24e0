// What loading means on every system: a library whose code ran stays loaded.
#include "os/dynamic_library.h"

#include <mutex>
#include <vector>

namespace rung {

void* keep_loaded_forever(DynamicLibrary library) {
  static std::mutex mutex;
  static auto* kept = new std::vector<void*>();  // leaked on purpose: never unloaded
  std::lock_guard lock(mutex);
  kept->push_back(library.release());
  return kept->back();
}

}  // namespace rung
