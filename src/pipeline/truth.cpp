// Ground truth: a page's lines, and how well a run read them.
#include <fmt/format.h>

#include <algorithm>

#include "os/json_input.h"
#include "rung/pipeline.h"

namespace rung {
namespace {

// Full-width forms (U+FF01..U+FF5E, the ideographic space U+3000) as the ASCII
// characters they stand for, as Unicode's compatibility folding (NFKC) has them.
std::string fold_width(const std::string& utf8) {
  std::string out;
  for (std::size_t i = 0; i < utf8.size(); ++i) {
    const auto b = [&](std::size_t k) { return static_cast<unsigned char>(utf8[k]); };
    if (i + 2 < utf8.size() && b(i) == 0xE3 && b(i + 1) == 0x80 && b(i + 2) == 0x80) {
      out += ' ';
      i += 2;
    } else if (i + 2 < utf8.size() && b(i) == 0xEF && (b(i + 1) == 0xBC || b(i + 1) == 0xBD)) {
      const unsigned cp = 0xF000u | ((b(i + 1) & 0x3Fu) << 6) | (b(i + 2) & 0x3Fu);
      if (cp >= 0xFF01 && cp <= 0xFF5E) {
        out += static_cast<char>(cp - 0xFEE0);
        i += 2;
        continue;
      }
      out += utf8[i];
    } else {
      out += utf8[i];
    }
  }
  return out;
}

}  // namespace

TextScore& TextScore::operator+=(const TextScore& other) {
  truth_lines += other.truth_lines;
  found_lines += other.found_lines;
  truth_chars += other.truth_chars;
  edits += other.edits;
  return *this;
}

Result<std::vector<std::string>> read_truth_lines(const std::filesystem::path& file) {
  auto j = read_json_file(file);  // a document's size limit
  if (!j) {
    // Only a file that is not there is absent; anything else there (a loop of links, a FIFO, a file that is too big) is damage.
    const ErrorCode code = j.error().code == ErrorCode::kNotFound ? ErrorCode::kNotFound : ErrorCode::kInvalidArgument;
    return Error{code, fmt::format("truth file {}", j.error().message)};
  }
  // Other keys ("image", "note", a line's "box") are the writer's own.
  JsonFields page(*j, "truth file " + file.string());
  const nlohmann::json* listed = page.array("lines", kMaxTruthLines);
  RUNG_RETURN_IF_ERROR(page.problems());
  std::vector<std::string> lines;
  for (std::size_t i = 0; i < listed->size(); ++i) {
    JsonFields line((*listed)[i], fmt::format("truth file {}: lines[{}]", file.string(), i));
    lines.push_back(line.text("text"));
    RUNG_RETURN_IF_ERROR(line.problems());
  }
  return lines;
}

TextScore score_lines(const std::vector<std::string>& read_as_is, const std::vector<std::string>& truth) {
  std::vector<std::string> read;
  for (const auto& r : read_as_is) read.push_back(fold_width(r));
  TextScore score;
  score.truth_lines = truth.size();
  struct Pair {
    double cer;
    std::size_t edits, r, t;
  };
  std::vector<Pair> pairs;
  for (std::size_t t = 0; t < truth.size(); ++t) {
    const std::size_t length = code_points(truth[t]);
    score.truth_chars += length;
    for (std::size_t r = 0; r < read.size(); ++r) {
      const std::size_t e = edit_distance(read[r], truth[t]);
      pairs.push_back({static_cast<double>(e) / static_cast<double>(std::max<std::size_t>(length, 1)), e, r, t});
    }
  }
  std::stable_sort(pairs.begin(), pairs.end(), [](const Pair& a, const Pair& b) { return a.cer < b.cer; });
  std::vector<bool> read_used(read.size(), false), truth_used(truth.size(), false);
  for (const Pair& p : pairs) {
    if (read_used[p.r] || truth_used[p.t]) continue;
    read_used[p.r] = truth_used[p.t] = true;
    score.edits += p.edits;
    if (p.cer <= 0.25) ++score.found_lines;
  }
  // What is left unmatched is wholly wrong: a truth line missed, or a line read that is not there.
  for (std::size_t t = 0; t < truth.size(); ++t) score.edits += truth_used[t] ? 0 : code_points(truth[t]);
  for (std::size_t r = 0; r < read.size(); ++r) score.edits += read_used[r] ? 0 : code_points(read[r]);
  return score;
}

}  // namespace rung
