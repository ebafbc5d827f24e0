#include "json_output.h"

#include <fmt/format.h>

#include <cstdio>

#include "commands.h"
#include "numeric_args.h"

namespace rung::cli {

void JsonOutput::add_to(CLI::App& command, const std::string& what) {
  command.add_flag("--json", print, fmt::format("Print {} as JSON on stdout (and no text there)", what));
  add_text(command, "--out-json", file, fmt::format("Write {} as JSON to FILE too ('-': stdout, as --json)", what))->type_name("FILE");
}

NamedPath JsonOutput::output() const { return {"--out-json", to_file() ? path_from_utf8(file) : std::filesystem::path()}; }

void JsonOutput::emit(const nlohmann::json& document) const {
  // Text that is not UTF-8 (a file name, a provider's message) is replaced, never a throw.
  emit_text(document.dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
}

void JsonOutput::emit_text(std::string text) const {
  if (text.empty() || text.back() != '\n') text += "\n";
  if (on_stdout()) {
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
  }
  if (to_file()) {
    if (auto s = write_output_file(path_from_utf8(file), text); !s) throw CliError(kExitUsage, fmt::format("--out-json {}: {}", file, s.error().message));
  }
}

}  // namespace rung::cli
