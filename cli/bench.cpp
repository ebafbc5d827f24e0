// Placeholder for `rung bench`.
#include "commands.h"

namespace rung::cli {
void add_bench_command(CLI::App&) {}
}  // namespace rung::cli
