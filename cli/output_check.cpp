#include "output_check.h"

#include "commands.h"

namespace rung::cli {

void check_outputs_before_work(const std::vector<NamedPath>& outputs, const std::vector<NamedPath>& inputs) {
  if (auto s = check_output_paths(outputs, inputs); !s) throw CliError(kExitUsage, s.error().message);
}

void check_output_directory_before_work(const NamedPath& dir) {
  if (auto s = check_output_directory(dir); !s) throw CliError(kExitUsage, s.error().message);
}

std::string file_of_assignment(const std::string& arg) {
  const auto eq = arg.find('=');
  return eq == std::string::npos ? arg : arg.substr(eq + 1);
}

}  // namespace rung::cli
