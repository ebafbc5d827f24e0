#include "rung/print.h"

#include <string>

#include "rung/printable.h"

namespace rung {

void print_text(std::FILE* stream, std::string_view text) noexcept {
  try {
    const std::string safe = printable_lines(text);
    std::fwrite(safe.data(), 1, safe.size(), stream);
  } catch (...) {  // no memory for the escaped copy: a line says so in its place
    std::fputs("rung: out of memory while printing\n", stream);
  }
}

void print_verbatim(std::FILE* stream, std::string_view text) noexcept {
  std::fwrite(text.data(), 1, text.size(), stream);
}

}  // namespace rung
