// CLI11's help and its parse errors, printed as everything else is printed
// (rung/print.h): an argument quoted back in an error ("The following argument
// was not expected: ...") is the user's text, and is escaped like any other.
#pragma once

#include <CLI/CLI.hpp>
#include <sstream>

#include "rung/print.h"

namespace rung::cli {

// CLI11's exit code for `e`, its words printed through print_text.
inline int print_parse_error(CLI::App& app, const CLI::ParseError& e) {
  std::ostringstream out, err;
  const int code = app.exit(e, out, err);
  print_text(stdout, out.str());
  print_text(stderr, err.str());
  return code;
}

}  // namespace rung::cli
