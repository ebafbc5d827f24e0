// A CTC decoder's character list (a text gate's "characters", ocr-lines' keys):
// read from a file, then used as the decoder uses it, on scores made of the
// same bytes, and the edit distance its gate takes over the decoded text.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "scratch_file.h"
#include "rung/decode.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string& file = rung::fuzz::write_scratch_file("character-list", "txt", data, size);
  for (bool space : {true, false}) {
    auto chars = rung::CharacterList::from_file(file, space);
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
