#include "progress.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>

namespace rung::cli {
namespace {
constexpr const char* kClearLine = "\r\033[K";  // back to the line's start, erase to its end
}  // namespace

bool progress_on_terminal() { return ::isatty(STDERR_FILENO) != 0; }

void show_progress_line(const std::string& text) { fmt::print(stderr, "{}{}", kClearLine, text); }

void clear_progress_line() { fmt::print(stderr, "{}", kClearLine); }

const char* progress_clear_prefix(bool on_terminal) { return on_terminal ? kClearLine : ""; }

}  // namespace rung::cli
