#include "quantise/input_sets.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>

#include "os/file_hash.h"

namespace rung {

Result<InputSet> read_input_set(const std::filesystem::path& dir) {
  auto items = InputItems::listed(dir);
  if (!items) return items.error();
  InputSet set;
  set.dir = dir;
  for (std::size_t i = 0; i < items->size(); ++i) set.items.push_back(items->at(i));
  std::vector<std::pair<std::string, std::filesystem::path>> hashed;
  for (const auto& item : set.items) {
    for (const auto& f : item.files) {
      auto h = sha256_of_file(f);
      if (!h) return h.error();
      hashed.emplace_back(*h, f);
    }
  }
  std::sort(hashed.begin(), hashed.end());
  std::string lines;
  for (auto& [h, f] : hashed) {
    lines += h + "\n";
    set.file_sha256.push_back(h);
    set.files.push_back(f);
  }
  set.sha256 = sha256_hex(lines);
  return set;
}

Status check_disjoint(const InputSet& calibration, const InputSet& holdout) {
  std::map<std::string, std::filesystem::path> seen;
  for (std::size_t i = 0; i < calibration.file_sha256.size(); ++i) seen.emplace(calibration.file_sha256[i], calibration.files[i]);
  std::vector<std::string> shared;
  for (std::size_t i = 0; i < holdout.file_sha256.size(); ++i) {
    if (auto it = seen.find(holdout.file_sha256[i]); it != seen.end()) {
      shared.push_back(fmt::format("{} = {}", holdout.files[i].string(), it->second.string()));
    }
  }
  if (shared.empty()) return {};
  const std::size_t shown = std::min<std::size_t>(shared.size(), 5);
  return Error{ErrorCode::kInvalidArgument,
               fmt::format("the holdout set {} shares {} file{} with the calibration set {} (by content): {}{}; a holdout must be inputs the "
                           "calibration never saw",
                           holdout.dir.string(), shared.size(), shared.size() == 1 ? "" : "s", calibration.dir.string(),
                           fmt::join(shared.begin(), shared.begin() + static_cast<std::ptrdiff_t>(shown), "; "), shared.size() > shown ? "; ..." : "")};
}

}  // namespace rung
