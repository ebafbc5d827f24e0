// A CTC decoder's character list (a text gate's "characters", ocr-lines' keys):
// read from a file, then used as the decoder uses it, on scores made of the
// same bytes, and the edit distance its gate takes over the decoded text.
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "rung/decode.h"

namespace {

const std::string& scratch_file() {
  static const std::string path = "/tmp/rung-fuzz-character-list-" + std::to_string(::getpid()) + ".txt";
  static const int removed_at_exit = std::atexit([] { std::remove(scratch_file().c_str()); });
  (void)removed_at_exit;
  return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::ofstream(scratch_file(), std::ios::binary | std::ios::trunc).write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  for (bool space : {true, false}) {
    auto chars = rung::CharacterList::from_file(scratch_file(), space);
    if (!chars) continue;
    const std::size_t classes = chars->classes(), steps = 8;
    std::vector<float> scores(steps * classes);
    for (std::size_t i = 0; i < scores.size(); ++i) scores[i] = static_cast<float>(data[i % std::max<std::size_t>(size, 1)] % 7);
    const auto line = rung::ctc_greedy_decode(scores, steps, *chars);
    (void)rung::code_points(line.text);
    // Bounded: the distance is quadratic, and a symbol may be a whole input long.
    (void)rung::edit_distance(line.text.substr(0, 256), chars->symbol(classes - 1).substr(0, 256));
  }
  return 0;
}
