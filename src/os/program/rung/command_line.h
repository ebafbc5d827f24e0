// The command line this process was started with, as a record's provenance
// (bench, conform): the program's name without its directory ("rung" for
// rung-full, which the `rung` front becomes), then each
// argument, quoted where a shell would need it. "rung" when it cannot be read.
#pragma once

#include <string>

namespace rung {

std::string this_command_line();

}  // namespace rung
