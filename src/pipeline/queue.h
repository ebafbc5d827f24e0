// A bounded queue between two stages: a full queue makes the stage above wait
// (back-pressure), so memory holds a fixed number of pages however many there
// are. Closing it lets the stage below drain what is left; cancelling it wakes
// everyone and refuses every push and pop from then on.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <optional>

namespace rung {

template <class T>
class BoundedQueue {
 public:
  explicit BoundedQueue(std::size_t capacity) : capacity_(capacity < 1 ? 1 : capacity) {}

  // Blocks while full; false when the queue was cancelled (the item is dropped).
  bool push(T item) {
    std::unique_lock lock(mutex_);
    room_.wait(lock, [&] { return cancelled_ || items_.size() < capacity_; });
    if (cancelled_) return false;
    items_.push_back(std::move(item));
    ready_.notify_one();
    return true;
  }

  // Blocks while empty and open; nothing once it is closed and drained, or cancelled.
  std::optional<T> pop() {
    std::unique_lock lock(mutex_);
    ready_.wait(lock, [&] { return cancelled_ || closed_ || !items_.empty(); });
    if (cancelled_ || items_.empty()) return std::nullopt;
    T item = std::move(items_.front());
    items_.pop_front();
    room_.notify_one();
    return item;
  }

  void close() {
    std::lock_guard lock(mutex_);
    closed_ = true;
    ready_.notify_all();
  }

  void cancel() {
    std::lock_guard lock(mutex_);
    cancelled_ = true;
    items_.clear();
    ready_.notify_all();
    room_.notify_all();
  }

 private:
  const std::size_t capacity_;
  std::mutex mutex_;
  std::condition_variable ready_, room_;
  std::deque<T> items_;
  bool closed_ = false;
  bool cancelled_ = false;
};

}  // namespace rung
