// Every command's JSON, one way. `--json` prints the document on stdout, and
// then nothing else goes to stdout (the text a person reads is left out), so
// `rung CMD --json | python3 -m json.tool` always parses. `--out-json FILE`
// writes the same document to FILE, atomically; `-` there means stdout, as
// --json. Commands that write other files name them beside it (--html, --csv).
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

#include "rung/output_paths.h"

namespace rung::cli {

struct JsonOutput {
  bool print = false;  // --json
  std::string file;    // --out-json FILE ("-": stdout)

  // Declares --json and --out-json; `what` says what the document is ("the report", "the record").
  void add_to(CLI::App& command, const std::string& what);
  // Whether stdout carries the JSON: the command prints no text on stdout then.
  bool on_stdout() const { return print || file == "-"; }
  // Whether a file is to be written (not "-").
  bool to_file() const { return !file.empty() && file != "-"; }
  // For check_outputs_before_work: {"--out-json", FILE}, or an empty path when no file is written.
  NamedPath output() const;
  // Prints the document on stdout when asked, writes it to the file when one is named.
  // Throws CliError (usage) naming the file when it cannot be written.
  void emit(const nlohmann::json& document) const;
  // The same for a document the library already wrote as text (ProbeOutcome::to_json(), an ordered_json's dump).
  void emit_text(std::string text) const;
};

}  // namespace rung::cli
