#include "progress.h"

#include <fmt/format.h>

#include <cstdio>

#include "rung/print.h"
#include "rung/terminal.h"

namespace rung::cli {
namespace {
constexpr const char* kClearLine = "\r\033[K";  // back to the line's start, erase to its end
}  // namespace

bool progress_on_terminal() { return stderr_is_terminal(); }

void show_progress_line(const std::string& text) {
  print_verbatim(stderr, kClearLine);
  print_text(stderr, text);  // a model's or an image's name in it is escaped like any other print
}

void clear_progress_line() { print_verbatim(stderr, kClearLine); }

}  // namespace rung::cli
