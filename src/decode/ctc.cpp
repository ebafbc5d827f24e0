// CTC greedy decoding with a character list, and the edit distance its gate uses.
#include <fmt/format.h>

#include <algorithm>

#include "os/read_file.h"
#include "rung/decode.h"

namespace rung {
namespace {

std::u32string to_code_points(std::string_view s) {
  std::u32string out;
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    const std::size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 1;
    char32_t cp = len == 1 ? c : len == 2 ? (c & 0x1fu) : len == 3 ? (c & 0x0fu) : (c & 0x07u);
    for (std::size_t k = 1; k < len && i + k < s.size(); ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3fu);
    out.push_back(cp);
    i += len;
  }
  return out;
}

}  // namespace

Result<CharacterList> CharacterList::from_file(const std::filesystem::path& file, bool append_space) {
  // A regular file of a character list's size: a FIFO or /dev/zero is refused, not waited on or read forever.
  auto text = read_input_file(file, FileKind::kCharacterList);
  if (!text) return Error{text.error().code, "character list " + text.error().message};
  std::vector<std::string> symbols;
  for (std::size_t start = 0; start < text->size();) {
    const auto end = std::min(text->find('\n', start), text->size());
    std::string line = text->substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    symbols.push_back(std::move(line));
    start = end + 1;
  }
  if (symbols.empty()) return Error{ErrorCode::kInvalidArgument, fmt::format("{}: the character list is empty", file.string())};
  return from_symbols(std::move(symbols), append_space);
}

CharacterList CharacterList::from_symbols(std::vector<std::string> symbols, bool append_space) {
  CharacterList c;
  c.symbols_ = std::move(symbols);
  if (append_space) c.symbols_.emplace_back(" ");
  return c;
}

TextLine ctc_greedy_decode(std::span<const float> scores, std::size_t steps, const CharacterList& chars) {
  TextLine line;
  const std::size_t classes = chars.classes();
  if (classes == 0 || scores.size() < steps * classes) return line;
  std::size_t previous = 0, kept = 0;
  double sum = 0;
  for (std::size_t t = 0; t < steps; ++t) {
    auto row = scores.subspan(t * classes, classes);
    const auto best = static_cast<std::size_t>(std::max_element(row.begin(), row.end()) - row.begin());
    if (best != 0 && best != previous) {
      line.text += chars.symbol(best);
      sum += row[best];
      ++kept;
    }
    previous = best;
  }
  line.score = kept ? sum / static_cast<double>(kept) : 0.0;
  return line;
}

std::size_t code_points(std::string_view utf8) { return to_code_points(utf8).size(); }

std::size_t edit_distance(std::string_view a, std::string_view b) {
  const auto x = to_code_points(a), y = to_code_points(b);
  std::vector<std::size_t> row(y.size() + 1);
  for (std::size_t j = 0; j <= y.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= x.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= y.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (x[i - 1] == y[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[y.size()];
}

}  // namespace rung
