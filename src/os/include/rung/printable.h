// Text that came from a file or a user (release names, notes, reasons, device
// strings, recipe settings), made safe to print on a terminal: control
// characters shown as escapes, so a name cannot move the cursor, recolour the
// screen, retitle the window or forge a line of output.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace rung {

// `text` with C0 controls (\n, \t, \x1b, ...), DEL, C1 controls (U+0080 to
// U+009F), the bidirectional overrides (U+202A to U+202E, U+2066 to U+2069)
// and bytes that are not UTF-8 written as escapes: "\n", "\t", "\x1b", "\u009b",
// "\u202e", "\xff". At most `max_bytes` of the input are shown, then "…"
// (a listing's cell); the rest prints whole.
std::string printable(std::string_view text, std::size_t max_bytes = std::string_view::npos);

// The same for text that spans lines (a report, a message, a log's tail): the
// line break and the tab are kept, everything else printable() escapes is
// escaped, with no limit. What every print of rung's programs passes through
// (rung/print.h).
std::string printable_lines(std::string_view text);

// Why `text` cannot be stored as a name: "" when it is fine, else "holds a
// control character (\x1b at byte 4)" or "is not UTF-8 (byte \xff at 2)".
// Fine: valid UTF-8 without any character printable() would escape.
std::string unprintable_why(std::string_view text);

// "" when `text` is UTF-8, else "is not UTF-8 (byte \xff at 2)": what crosses
// the C ABI (names, paths, values) must be.
std::string not_utf8_why(std::string_view text);

}  // namespace rung
