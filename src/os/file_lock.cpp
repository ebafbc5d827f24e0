#include "os/file_lock.h"

#include <fmt/format.h>

#include <thread>

#include "os/lock_file_system.h"

namespace rung {

Result<CacheLock> CacheLock::acquire(const std::filesystem::path& lock_file, std::chrono::milliseconds wait,
                                     const std::function<void(long)>& on_busy, const std::atomic<bool>* stop) {
  auto handle = lock_file::open(lock_file);
  if (!handle) return handle.error();
  auto taken = lock_file::try_take(*handle, lock_file);
  if (!taken) {
    lock_file::close(*handle);
    return taken.error();
  }
  if (!*taken) {
    // The holder writes its id just after it takes the lock: a waiter that looks in
    // between reads none, so it looks again for a moment before naming whom it waits for.
    long holder = lock_file::holder(*handle);
    for (int i = 0; holder == 0 && i < 50; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      holder = lock_file::holder(*handle);
    }
    if (on_busy) on_busy(holder);
    const auto until = std::chrono::steady_clock::now() + wait;
    for (;;) {
      auto again = lock_file::try_take(*handle, lock_file);
      if (again && *again) break;
      if (stop != nullptr && stop->load()) {
        lock_file::close(*handle);
        return Error{ErrorCode::kRuntime, fmt::format("stopped while waiting for {} (the engine is quitting)", lock_file.string())};
      }
      if (std::chrono::steady_clock::now() >= until) {
        const long now_holding = lock_file::holder(*handle);
        lock_file::close(*handle);
        return Error{ErrorCode::kIo,
                     fmt::format("{} is held by {} and was not released within {:.3g} s; it may be hung: end it, or use another directory",
                                 lock_file.string(), describe_process(now_holding ? now_holding : holder),
                                 std::chrono::duration<double>(wait).count())};
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  lock_file::write_holder(*handle);
  return CacheLock(*handle);
}

CacheLock::CacheLock(CacheLock&& other) noexcept : handle_(other.handle_) { other.handle_ = lock_file::kNoHandle; }

CacheLock::~CacheLock() {
  if (handle_ != lock_file::kNoHandle) lock_file::close(handle_);
}

}  // namespace rung
