// CLI11's help and its parse errors, printed as everything else is printed
// (rung/print.h): an argument quoted back in an error ("The following argument
// was not expected: ...") is the user's text, and is escaped like any other.
#pragma once

#include <CLI/CLI.hpp>
#include <algorithm>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "rung/print.h"
#include "rung/printable.h"

namespace rung::cli {

// CLI11's exit code for `e`, its words printed through print_text.
inline int print_parse_error(CLI::App& app, const CLI::ParseError& e) {
  std::ostringstream out, err;
  const int code = app.exit(e, out, err);
  print_text(stdout, out.str());
  print_text(stderr, err.str());
  return code;
}

// Edits from `a` to `b`: a character inserted, removed or changed, or two
// neighbours swapped ("bnech" is one from "bench"), each one.
inline std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.size()][b.size()];
}

// When the first word of the command line names no command of `app` ("rung
// bnech"), the line that says so, with the command it most likely meant: one
// a slip or two of the keyboard away (at most a third of its letters), or the
// only one it begins. Nothing when the first word is an option or a command.
inline std::optional<std::string> unknown_command_message(CLI::App& app, int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-' || argv[1][0] == '\0') return std::nullopt;
  const std::string typed = argv[1];
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (sub->check_name(typed)) return std::nullopt;
    names.push_back(sub->get_name());
  }
  if (names.empty()) return std::nullopt;
  std::string best;
  std::size_t best_distance = typed.size();
  for (const auto& n : names) {
    const std::size_t d = edit_distance(typed, n);
    if (d < best_distance && d <= std::max<std::size_t>(1, n.size() / 3)) best = n, best_distance = d;
  }
  if (best.empty() && typed.size() >= 3) {
    std::vector<std::string> begun;
    std::copy_if(names.begin(), names.end(), std::back_inserter(begun), [&](const std::string& n) { return n.rfind(typed, 0) == 0; });
    if (begun.size() == 1) best = begun.front();
  }
  std::string message = "no command '" + printable(typed, 80) + "'";
  if (!best.empty()) message += "; did you mean '" + best + "'?";
  return message + " (rung --help lists the commands)";
}

}  // namespace rung::cli
