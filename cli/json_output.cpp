#include "json_output.h"

#include <fmt/format.h>

#include <cstdio>

#include "commands.h"
#include "numeric_args.h"
#include "rung/json_text.h"
#include "rung/print.h"

namespace rung::cli {

void JsonOutput::add_to(CLI::App& command, const std::string& what) {
  command.add_flag("--json", print, fmt::format("Print {} as JSON on stdout (and no text there)", what));
  add_text(command, "--out-json", file, fmt::format("Write {} as JSON to FILE too ('-': stdout, as --json)", what))->type_name("FILE");
}

NamedPath JsonOutput::output() const { return {"--out-json", to_file() ? path_from_utf8(file) : std::filesystem::path()}; }

void JsonOutput::emit(const nlohmann::json& document) const {
  // Text that is not UTF-8 (a file name, a provider's message) is replaced, never a throw.
  emit_text(json_text(document, 2));
}

void JsonOutput::emit_text(std::string text) const {
  if (text.empty() || text.back() != '\n') text += "\n";
  if (on_stdout()) {
    print_text(stdout, text);  // json_text's output has no control characters to escape
    std::fflush(stdout);
  }
  if (to_file()) {
    if (auto s = write_output_file(path_from_utf8(file), text); !s) throw CliError(kExitUsage, fmt::format("--out-json {}: {}", file, s.error().message));
  }
}

}  // namespace rung::cli
