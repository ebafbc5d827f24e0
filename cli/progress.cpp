#include "progress.h"

#include <fmt/format.h>

#include <cstdio>

#include "rung/terminal.h"

namespace rung::cli {
namespace {
constexpr const char* kClearLine = "\r\033[K";  // back to the line's start, erase to its end
}  // namespace

bool progress_on_terminal() { return stderr_is_terminal(); }

void show_progress_line(const std::string& text) { fmt::print(stderr, "{}{}", kClearLine, text); }

void clear_progress_line() { fmt::print(stderr, "{}", kClearLine); }

const char* progress_clear_prefix(bool on_terminal) { return on_terminal ? kClearLine : ""; }

}  // namespace rung::cli
