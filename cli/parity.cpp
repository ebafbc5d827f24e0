// Placeholder for `rung parity`.
#include "commands.h"

namespace rung::cli {
void add_parity_command(CLI::App&) {}
}  // namespace rung::cli
