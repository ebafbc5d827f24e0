// Every command that writes files calls this before any work, with everything
// it writes and everything it reads: an output that is one of its inputs (the
// same file, links included), another output, a directory, or a file in a
// directory that is not there is a usage error (exit 2) naming both paths
// (rung/output_paths.h). A new command that writes adds itself here.
#pragma once

#include <string>
#include <vector>

#include "rung/output_paths.h"

namespace rung::cli {

// Throws CliError (usage) when an output would replace an input or cannot be written.
void check_outputs_before_work(const std::vector<NamedPath>& outputs, const std::vector<NamedPath>& inputs);

// Throws CliError (usage) when a directory the command writes in (a cache, a kept work directory) is a file.
void check_output_directory_before_work(const NamedPath& dir);

// "NAME=FILE" or "FILE": the file.
std::string file_of_assignment(const std::string& arg);

}  // namespace rung::cli
