// What rung's programs print reaches stdout or stderr here and nowhere else
// (tools/check-text-policy.py holds it: no other object of a program calls stdio,
// fmt::print or std::cout). Printed text carries names from outside: a model's
// inputs, outputs and nodes, file and folder names, a provider's message, a
// worker's log. Here every control character but the line break and the tab,
// every C1 control and bidirectional override, and every byte that is not
// UTF-8 is written as an escape (printable_lines(), rung/printable.h), so no
// name can move the cursor, recolour or retitle the terminal. JSON that
// rung::json_text wrote has none of these, and passes unchanged.
#pragma once

#include <fmt/format.h>

#include <cstdio>
#include <string_view>
#include <utility>

namespace rung {

// Writes printable_lines(text) to `stream`. Never throws: a failed write is
// left in the stream's error flag, which the program checks at its end.
void print_text(std::FILE* stream, std::string_view text) noexcept;

// Writes `text` unchanged: only rung's own bytes (the progress line's carriage
// return and erase; a message made without allocating), never text from outside.
void print_verbatim(std::FILE* stream, std::string_view text) noexcept;

// fmt::print's forms, through print_text.
template <class... Args>
void print(std::FILE* stream, fmt::format_string<Args...> format, Args&&... args) {
  print_text(stream, fmt::format(format, std::forward<Args>(args)...));
}
template <class... Args>
void print(fmt::format_string<Args...> format, Args&&... args) {
  print_text(stdout, fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace rung
