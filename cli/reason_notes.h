// A table's long reasons, each said once: a row refers to a numbered note
// ("see [1]") printed under the table, so a ~350-character reason shared by
// every row of a table is read once. A short reason stays in its row.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace rung::cli {

class ReasonNotes {
 public:
  // A reason longer than this many characters becomes a note.
  explicit ReasonNotes(std::size_t max_in_row = 120) : max_in_row_(max_in_row) {}
  // What the row shows: the reason itself when short, else "[N]" naming its note (the same N for the same text).
  std::string cell(const std::string& reason);
  // The notes, one a line ("  [1] reason"), after an empty line; nothing when there are none.
  std::string text() const;
  bool empty() const { return notes_.empty(); }

 private:
  std::size_t max_in_row_;
  std::vector<std::string> notes_;
};

}  // namespace rung::cli
