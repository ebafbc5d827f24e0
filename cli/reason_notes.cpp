#include "reason_notes.h"

#include <fmt/format.h>

#include <algorithm>

namespace rung::cli {

std::string ReasonNotes::cell(const std::string& reason) {
  if (reason.size() <= max_in_row_) return reason;
  auto it = std::find(notes_.begin(), notes_.end(), reason);
  if (it == notes_.end()) it = notes_.insert(notes_.end(), reason);
  return fmt::format("[{}]", it - notes_.begin() + 1);
}

std::string ReasonNotes::text() const {
  if (notes_.empty()) return {};
  std::string out = "\n";
  for (std::size_t i = 0; i < notes_.size(); ++i) out += fmt::format("  [{}] {}\n", i + 1, notes_[i]);
  return out;
}

}  // namespace rung::cli
