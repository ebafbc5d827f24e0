// A fresh directory under the system's temporary directory for one run's
// scratch files, removed with everything in it when the owner goes.
#pragma once

#include <filesystem>
#include <string>

#include "rung/result.h"

namespace rung {

class TempDir {
 public:
  // "<tmp>/<prefix>.XXXXXX"
  static Result<TempDir> create(const std::string& prefix);
  TempDir(TempDir&& other) noexcept : path_(std::move(other.path_)) { other.path_.clear(); }
  TempDir& operator=(TempDir&&) = delete;
  TempDir(const TempDir&) = delete;
  ~TempDir();
  const std::filesystem::path& path() const { return path_; }

 private:
  explicit TempDir(std::filesystem::path p) : path_(std::move(p)) {}
  std::filesystem::path path_;
};

// "2026-11-30T08:15:00Z"
std::string utc_now();

}  // namespace rung
