#include "output_check.h"

#include "commands.h"
#include "model_args.h"
#include "rung/path_text.h"
#include "rung/user_dirs.h"

namespace rung::cli {

std::vector<NamedPath> rung_state(const std::filesystem::path& cache_dir) {
  std::vector<NamedPath> state;
  if (!cache_dir.empty()) {
    state.push_back({"rung's cache", cache_dir});
  } else if (auto dir = cache_dir_if_any()) {
    state.push_back({"rung's cache", *dir});
  }
  if (auto data = user_data_dir()) state.push_back({"rung's data directory (the registry)", *data});
  // The registry RUNG_REGISTRY names, when it is a file (sqlite:PATH or PATH), not a server's database.
  if (auto url = path_in_variable("RUNG_REGISTRY")) {
    std::string text = url->string();
    if (text.find("://") == std::string::npos) {
      if (text.starts_with("sqlite:")) text = text.substr(7);
      state.push_back({"the registry (RUNG_REGISTRY)", path_from_utf8(text)});
    }
  }
  return state;
}

void check_outputs_before_work(const std::vector<NamedPath>& outputs, std::vector<NamedPath> inputs, const std::filesystem::path& cache_dir) {
  for (auto& s : rung_state(cache_dir)) inputs.push_back(std::move(s));
  if (auto s = check_output_paths(outputs, inputs); !s) throw CliError(kExitUsage, s.error().message);
}

void check_output_directory_before_work(const NamedPath& dir, const std::vector<NamedPath>& inputs) {
  if (auto s = check_output_directory(dir, inputs); !s) throw CliError(kExitUsage, s.error().message);
}

std::string file_of_assignment(const std::string& arg) {
  const auto eq = arg.find('=');
  return eq == std::string::npos ? arg : arg.substr(eq + 1);
}

}  // namespace rung::cli
