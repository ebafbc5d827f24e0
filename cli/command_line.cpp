// The command line as typed: a record's provenance (bench, conform).
#include "commands.h"
#include "rung/command_line.h"

namespace rung::cli {

std::string command_line() { return this_command_line(); }

}  // namespace rung::cli
