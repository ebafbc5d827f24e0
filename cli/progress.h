// Progress lines, one way for every command: a line redrawn in place on stderr,
// and only when stderr is a terminal, so a log or a pipe never holds carriage
// returns or escape sequences. A command asks `progress_on_terminal()` once and
// draws with `show_progress_line`; a message printed while a line is drawn
// clears it first (`clear_progress_line`).
#pragma once

#include <string>

namespace rung::cli {

// Whether stderr is a terminal: the only case in which progress is drawn.
bool progress_on_terminal();
// Replaces the line drawn so far with `text` (no newline).
void show_progress_line(const std::string& text);
// Clears the line drawn so far.
void clear_progress_line();

}  // namespace rung::cli
